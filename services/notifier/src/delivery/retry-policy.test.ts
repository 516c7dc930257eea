import { describe, expect, it } from "vitest";
import { backoffMs, nextRetry, parseRetryAfter, type RetryPolicy, suspension, suspensionError } from "./retry-policy.ts";

const policy: RetryPolicy = { baseMs: 1000, maxMs: 60_000, maxAttempts: 5, retryAfterMaxMs: 30_000 };

describe("retry policy", () => {
  it("doubles the delay per attempt up to the cap, with jitter between half and all of it", () => {
    expect([1, 2, 3, 4].map((n) => backoffMs(n, policy, 0.999999))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((n) => backoffMs(n, policy, 0))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs(30, policy, 0.5)).toBe(45_000);
    expect(backoffMs(10_000, policy, 0.999999)).toBe(60_000);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-22T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:00:00 GMT", now)).toBe(0);
    for (const bad of [undefined, "", "soon", "-5", "1.5", "12abc"]) expect(parseRetryAfter(bad, now)).toBeNull();
  });

  it("honours Retry-After within bounds, and dead-letters after the last attempt", () => {
    expect(nextRetry(1, 5000, policy, 0.5)).toEqual({ dead: false, delayMs: 5000 });
    expect(nextRetry(1, 3_600_000, policy, 0.5)).toEqual({ dead: false, delayMs: 30_000 });
    expect(nextRetry(2, null, policy, 0)).toEqual({ dead: false, delayMs: 1000 });
    expect(nextRetry(4, null, policy, 0)).toEqual({ dead: false, delayMs: 4000 });
    expect(nextRetry(5, 1000, policy, 0)).toEqual({ dead: true });
  });
});

describe("endpoint health", () => {
  const day = 86_400_000;
  it("suspends at once when the receiver answers 410 Gone", () => {
    expect(suspension("GONE", 1_000, 1_000, 5 * day)).toBe("gone");
  });
  it("suspends a subscription that has failed without a success for the configured time", () => {
    expect(suspension("SERVER_ERROR", 0, 5 * day, 5 * day)).toBe("failing_too_long");
    expect(suspension("REFUSED", 0, 6 * day, 5 * day)).toBe("failing_too_long");
  });
  it("keeps to the retry schedule otherwise", () => {
    expect(suspension("SERVER_ERROR", 0, 5 * day - 1, 5 * day)).toBeNull();
    expect(suspension("CLIENT_ERROR", 0, 1, 5 * day)).toBeNull();
    expect(suspension("THROTTLED", 0, 1, 5 * day)).toBeNull();
  });
  it("says why in the dead letter", () => {
    expect(suspensionError("gone", "HTTP 410", 0)).toMatch(/410 Gone/);
    expect(suspensionError("failing_too_long", "HTTP 503", 7_000)).toMatch(/failing without a success for 7 s \(last: HTTP 503\)/);
    expect(suspensionError("attempts_exhausted", "HTTP 503", 0)).toBe("HTTP 503");
  });
});
