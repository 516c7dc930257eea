import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BackgroundCheck, NOT_CHECKED_YET } from "./background-check.ts";

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** A dependency the test answers by hand: each look waits until `answer` or `fail` (or forever). */
function dependency() {
  const pending: { resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  return {
    looks: () => pending.length,
    run: () => new Promise<string>((resolve, reject) => pending.push({ resolve, reject })),
    answer: (i: number, v = "pong") => pending[i]?.resolve(v),
    fail: (i: number, message: string) => pending[i]?.reject(new Error(message)),
  };
}

function logger() {
  return { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
}

describe("BackgroundCheck", () => {
  it("says 'checking' before the first look answers, then keeps the latest answer", async () => {
    const dep = dependency();
    const check = new BackgroundCheck({ name: "Redis", run: dep.run, intervalMs: 500, timeoutMs: 1_000 });
    const started = check.start();
    expect(check.state()).toEqual({ ok: false, reason: NOT_CHECKED_YET, at: null });
    dep.answer(0);
    await started;
    expect(check.state()).toMatchObject({ ok: true, value: "pong" });
    await check.close();
  });

  it("counts a look unanswered past its timeout as failed, and a fresh look clears it as soon as one answers", async () => {
    const dep = dependency();
    const log = logger();
    const check = new BackgroundCheck({ name: "Postgres", run: dep.run, intervalMs: 500, timeoutMs: 1_000, logger: log });
    void check.start();
    dep.answer(0);
    await vi.advanceTimersByTimeAsync(500);
    expect(dep.looks()).toBe(2);
    // Look 1 hangs (a silent peer): no new look while it may still answer, then it fails.
    await vi.advanceTimersByTimeAsync(500);
    expect(dep.looks()).toBe(2);
    expect(check.state().ok).toBe(true);
    await vi.advanceTimersByTimeAsync(500);
    expect(check.state()).toMatchObject({ ok: false, reason: "no answer within 1000 ms" });
    expect(log.warn).toHaveBeenCalledTimes(1);
    // The next interval starts a fresh look; its answer clears the reason at once.
    await vi.advanceTimersByTimeAsync(500);
    expect(dep.looks()).toBe(3);
    dep.answer(2);
    await vi.advanceTimersByTimeAsync(0);
    expect(check.state()).toMatchObject({ ok: true, value: "pong" });
    expect(log.info).toHaveBeenCalledWith({ check: "Postgres" }, "Postgres answers again");
    // The abandoned look answering late changes nothing.
    dep.fail(1, "late");
    await vi.advanceTimersByTimeAsync(0);
    expect(check.state().ok).toBe(true);
    await check.close();
  });

  it("reports a failing look with its error, and logs the change once, not once per look", async () => {
    const log = logger();
    let fail = true;
    const check = new BackgroundCheck({
      name: "Redis",
      run: () => (fail ? Promise.reject(new Error("connect ECONNREFUSED")) : Promise.resolve(1)),
      intervalMs: 500,
      timeoutMs: 1_000,
      logger: log,
    });
    await check.start();
    expect(check.state()).toMatchObject({ ok: false, reason: "connect ECONNREFUSED" });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(log.warn).toHaveBeenCalledTimes(1);
    fail = false;
    await vi.advanceTimersByTimeAsync(500);
    expect(check.state().ok).toBe(true);
    expect(log.info).toHaveBeenCalledTimes(1);
    await check.close();
  });

  it("tells onChange the first answer and every turn between ok and failed", async () => {
    let fail = false;
    const seen: boolean[] = [];
    const check = new BackgroundCheck({
      name: "Postgres",
      run: () => (fail ? Promise.reject(new Error("down")) : Promise.resolve()),
      intervalMs: 500,
      timeoutMs: 1_000,
      onChange: (c) => seen.push(c.ok),
    });
    await check.start();
    await vi.advanceTimersByTimeAsync(1_000);
    fail = true;
    await vi.advanceTimersByTimeAsync(1_000);
    fail = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen).toEqual([true, false, true]);
    await check.close();
  });

  it("turns a run that throws instead of rejecting into a failed look", async () => {
    const check = new BackgroundCheck({
      name: "Postgres",
      run: () => {
        throw new Error("pool closed");
      },
      intervalMs: 500,
      timeoutMs: 1_000,
    });
    await check.start();
    expect(check.state()).toMatchObject({ ok: false, reason: "pool closed" });
    await check.close();
  });

  it("starts no new look while three abandoned ones have not settled", async () => {
    const dep = dependency();
    const check = new BackgroundCheck({ name: "Redis", run: dep.run, intervalMs: 500, timeoutMs: 400 });
    void check.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(dep.looks()).toBe(3);
    expect(check.state()).toMatchObject({ ok: false, reason: "no answer within 400 ms" });
    dep.fail(0, "gone");
    await vi.advanceTimersByTimeAsync(500);
    expect(dep.looks()).toBe(4);
    await check.close();
  });

  it("looks no more once closed, and releases what it used", async () => {
    const release = vi.fn();
    const run = vi.fn(() => Promise.resolve(1));
    const check = new BackgroundCheck({ name: "Redis", run, intervalMs: 500, timeoutMs: 1_000, release });
    await check.start();
    await check.close();
    await check.close();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(run).toHaveBeenCalledTimes(1);
    expect(release).toHaveBeenCalledTimes(1);
  });
});
