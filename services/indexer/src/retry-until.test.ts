import { describe, expect, it, vi } from "vitest";
import { retryUntil } from "./retry-until.ts";

describe("retryUntil", () => {
  const base = { giveUpMs: 60_000, firstDelayMs: 1, maxDelayMs: 4, now: Date.now, onGiveUp: vi.fn() };

  it("retries with doubling delays until an attempt succeeds", async () => {
    let n = 0;
    const delays: number[] = [];
    const ok = await retryUntil({
      ...base,
      attempt: async () => {
        if (++n < 4) throw new Error(`no ${n}`);
      },
      stopped: () => false,
      onRetry: (_e, d) => delays.push(d),
    });
    expect(ok).toBe(true);
    expect(delays).toEqual([1, 2, 4]);
  });

  it("gives up after giveUpMs and says why", async () => {
    let t = 0;
    const onGiveUp = vi.fn();
    const ok = await retryUntil({
      ...base,
      now: () => t,
      attempt: async () => {
        t += 40_000;
        throw new Error("still down");
      },
      stopped: () => false,
      onRetry: () => {},
      onGiveUp,
    });
    expect(ok).toBe(false);
    expect(String(onGiveUp.mock.calls[0]?.[0])).toMatch(/still down/);
  });

  it("stops without trying when the caller closed", async () => {
    const attempt = vi.fn(async () => {});
    expect(await retryUntil({ ...base, attempt, stopped: () => true, onRetry: () => {} })).toBe(false);
    expect(attempt).not.toHaveBeenCalled();
  });

  it("fails an attempt that outlives attemptTimeoutMs and tries again", async () => {
    let n = 0;
    const errors: string[] = [];
    const ok = await retryUntil({
      ...base,
      attemptTimeoutMs: 20,
      attempt: () => (++n === 1 ? new Promise<void>(() => {}) : Promise.resolve()),
      stopped: () => false,
      onRetry: (e) => errors.push(String(e)),
    });
    expect(ok).toBe(true);
    expect(n).toBe(2);
    expect(errors).toEqual(["Error: the attempt did not finish within 20 ms"]);
  });

  it("waits between attempts with the caller's wait, which may end early", async () => {
    const waits: number[] = [];
    let n = 0;
    const ok = await retryUntil({
      ...base,
      firstDelayMs: 60_000,
      maxDelayMs: 60_000,
      wait: async (ms) => {
        waits.push(ms);
      },
      attempt: async () => {
        if (++n < 3) throw new Error("down");
      },
      stopped: () => false,
      onRetry: () => {},
    });
    expect(ok).toBe(true);
    expect(waits).toEqual([60_000, 60_000, 60_000]);
  });
});
