import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TIMED_OUT } from "@evb/domain";
import { ReplaceableAdmin } from "./replaceable-admin.ts";

/** An admin whose `ask` hangs while `hang` is set, and whose close may itself hang. */
function fakeAdmin(id: number, o: { hang?: boolean; closeHangs?: boolean } = {}) {
  return {
    id,
    ask: vi.fn(async () => (o.hang ? new Promise<never>(() => {}) : `answer ${id}`)),
    close: vi.fn(() => (o.closeHangs ? new Promise<void>(() => {}) : Promise.resolve())),
  };
}

describe("ReplaceableAdmin", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("makes the client on first use and keeps it while calls answer", async () => {
    const create = vi.fn(() => fakeAdmin(1));
    const slot = new ReplaceableAdmin({ create });
    expect(create).not.toHaveBeenCalled();
    expect(await slot.run((a) => a.ask(), 1_000)).toBe("answer 1");
    expect(await slot.run((a) => a.ask(), 1_000)).toBe("answer 1");
    expect(create).toHaveBeenCalledTimes(1);
  });

  it("answers TIMED_OUT for a call that hangs, closes that client in the background and runs the next call on a fresh one", async () => {
    const admins = [fakeAdmin(1, { hang: true, closeHangs: true }), fakeAdmin(2)];
    let made = 0;
    const slot = new ReplaceableAdmin({ create: () => admins[made++] as ReturnType<typeof fakeAdmin>, closeTimeoutMs: 5_000 });
    const first = slot.run((a) => a.ask(), 1_500);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(admins[0]?.close).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    // The caller is answered at the bound although the hung client's close never ends.
    expect(await first).toBe(TIMED_OUT);
    expect(admins[0]?.close).toHaveBeenCalledTimes(1);
    expect(await slot.run((a) => a.ask(), 1_500)).toBe("answer 2");
    expect(made).toBe(2);
    // Closing waits only for the client in use.
    await slot.close();
    expect(admins[1]?.close).toHaveBeenCalledTimes(1);
  });

  it("replaces a client once when several calls on it hang, and keeps one that failed outright", async () => {
    const admins = [fakeAdmin(1, { hang: true }), fakeAdmin(2)];
    let made = 0;
    const slot = new ReplaceableAdmin({ create: () => admins[made++] as ReturnType<typeof fakeAdmin> });
    const early = slot.run((a) => a.ask(), 1_000);
    const late = slot.run((a) => a.ask(), 2_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await early).toBe(TIMED_OUT);
    expect(await slot.run((a) => a.ask(), 1_000)).toBe("answer 2");
    await vi.advanceTimersByTimeAsync(1_000);
    // The later hang was on the client already replaced: the fresh one stays.
    expect(await late).toBe(TIMED_OUT);
    expect(admins[1]?.close).not.toHaveBeenCalled();
    await expect(slot.run(() => Promise.reject(new Error("refused")), 1_000)).rejects.toThrow("refused");
    expect(await slot.run((a) => a.ask(), 1_000)).toBe("answer 2");
    expect(made).toBe(2);
  });

  it("waits at most closeTimeoutMs for a close that hangs, and refuses calls once closed", async () => {
    const slot = new ReplaceableAdmin({ create: () => fakeAdmin(1, { closeHangs: true }), closeTimeoutMs: 3_000 });
    await slot.run((a) => a.ask(), 1_000);
    let closed = false;
    const closing = slot.close().then(() => {
      closed = true;
    });
    await vi.advanceTimersByTimeAsync(2_999);
    expect(closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await closing;
    expect(closed).toBe(true);
    await expect(slot.run((a) => a.ask(), 1_000)).rejects.toThrow("closed");
  });
});
