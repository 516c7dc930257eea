import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bestEffort } from "./best-effort.ts";
import type { Logger } from "./logger.ts";

let warnings: { obj: unknown; msg: string | undefined }[];
const logger: Logger = {
  debug() {},
  info() {},
  error() {},
  warn(obj, msg) {
    warnings.push({ obj, msg });
  },
};
const opts = { what: "copy counters", cost: "Postgres holds the truth", timeoutMs: 1_000, logger };

beforeEach(() => {
  vi.useFakeTimers();
  warnings = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe("bestEffort", () => {
  it("a write that answers in time logs nothing", async () => {
    await bestEffort(async () => "OK", opts);
    expect(warnings).toEqual([]);
  });

  it("a write that does not answer is waited for at most timeoutMs, logged, and not thrown", async () => {
    let done = false;
    const p = bestEffort(() => new Promise(() => {}), opts).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await p;
    expect(warnings).toEqual([
      { obj: { what: "copy counters", timeoutMs: 1_000 }, msg: expect.stringContaining("Postgres holds the truth") },
    ]);
  });

  it("a failing write is logged with its cause and skipped", async () => {
    await bestEffort(() => Promise.reject(new Error("READONLY")), opts);
    expect(warnings).toEqual([{ obj: { what: "copy counters", err: "READONLY" }, msg: expect.stringContaining("skipped") }]);
  });

  it("with rethrow a failure is logged and passed on, a timeout still is not", async () => {
    await expect(bestEffort(() => Promise.reject(new Error("READONLY")), { ...opts, rethrow: true })).rejects.toThrow("READONLY");
    const slow = bestEffort(() => new Promise(() => {}), { ...opts, rethrow: true });
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(slow).resolves.toBeUndefined();
    expect(warnings).toHaveLength(2);
  });

  it("a late rejection after the timeout is swallowed, not an unhandled rejection", async () => {
    let reject: (e: Error) => void = () => {};
    const p = bestEffort(() => new Promise((_, r) => (reject = r)), opts);
    await vi.advanceTimersByTimeAsync(1_000);
    await p;
    reject(new Error("late"));
    await vi.advanceTimersByTimeAsync(0);
    expect(warnings).toHaveLength(1);
  });
});
