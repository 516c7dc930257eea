import { describe, expect, it } from "vitest";
import {
  type AttemptOutcome,
  type DeliveryLimits,
  deliveryStep,
  recorded,
  type SliceState,
  sliceMove,
  sliceStart,
} from "./delivery-step.ts";

const limits: DeliveryLimits = {
  retry: { baseMs: 1000, maxMs: 60_000, maxAttempts: 5, retryAfterMaxMs: 30_000 },
  disableAfterMs: 86_400_000,
  recordEvents: 3,
  recordMs: 200,
  sliceEvents: 10,
  window: 1,
};
const T = 1_000_000;
const fresh: SliceState = { attempts: 0, failingSince: null, sent: 0, unrecorded: 0, recordedAt: T, endsAt: T + 10_000, window: 1 };
const ok: AttemptOutcome = { delivered: true };
const failed = (status: number | null, failure: string, retryAfter?: string): AttemptOutcome =>
  ({ delivered: false, failure, status, retryAfter, error: status ? `HTTP ${status}` : "127.0.0.1:9: ECONNREFUSED" }) as AttemptOutcome;
const at = (ms: number) => ({ startedAt: T + ms - 5, now: T + ms });

describe("delivery step: a 2xx", () => {
  it.each([
    { name: "goes on to the next event", state: fresh, now: 10, action: "post" },
    { name: "records once DELIVERY_RECORD_EVENTS are unrecorded", state: { ...fresh, unrecorded: 2 }, now: 10, action: "record" },
    { name: "records once the oldest unrecorded delivery is 200 ms old", state: fresh, now: 200, action: "record" },
    { name: "yields after DELIVERY_SLICE_EVENTS deliveries", state: { ...fresh, sent: 9 }, now: 10, action: "yield" },
    { name: "yields once the slice's time is up", state: fresh, now: 10_000, action: "yield" },
  ])("$name: $action", ({ state, now, action }) => {
    const step = deliveryStep(state, ok, at(now), limits, 0.5);
    expect(step.action).toBe(action);
    expect(step.state).toMatchObject({ attempts: 0, failingSince: null, sent: state.sent + 1, unrecorded: state.unrecorded + 1 });
  });

  it("clears the head's retry state, and doubles the window up to its limit", () => {
    const wide = { ...limits, window: 8 };
    const windows: number[] = [];
    let state: SliceState = { ...fresh, attempts: 3, failingSince: T - 5000 };
    for (let i = 0; i < 5; i++) {
      const step = deliveryStep(state, ok, at(1), wide, 0.5);
      state = recorded(step.state, T);
      windows.push(state.window);
    }
    expect(windows).toEqual([2, 4, 8, 8, 8]);
    expect(state).toMatchObject({ attempts: 0, failingSince: null });
  });

  it("with a window, a slice yields after DELIVERY_SLICE_EVENTS per window place", () => {
    const wide = { ...limits, window: 4 };
    expect(deliveryStep({ ...fresh, sent: 38 }, ok, at(1), wide, 0).action).not.toBe("yield");
    expect(deliveryStep({ ...fresh, sent: 39 }, ok, at(1), wide, 0).action).toBe("yield");
  });
});

describe("delivery step: a failed attempt", () => {
  it.each([
    { name: "5xx, first attempt: backoff from the base", outcome: failed(503, "SERVER_ERROR"), attempts: 0, random: 0, delay: 500 },
    { name: "refused, third attempt: doubled twice", outcome: failed(null, "REFUSED"), attempts: 2, random: 0.999999, delay: 4000 },
    { name: "429 with Retry-After seconds", outcome: failed(429, "THROTTLED", "7"), attempts: 0, random: 0, delay: 7000 },
    { name: "503 with Retry-After past the cap", outcome: failed(503, "SERVER_ERROR", "3600"), attempts: 1, random: 0, delay: 30_000 },
    { name: "a redirect is a failure like any other", outcome: failed(302, "REDIRECT"), attempts: 0, random: 0, delay: 500 },
  ])("$name: park $delay ms", ({ outcome, attempts, random, delay }) => {
    const step = deliveryStep(
      { ...fresh, attempts, failingSince: attempts > 0 ? T - 60_000 : null, window: 4 },
      outcome,
      at(20),
      limits,
      random,
    );
    expect(step).toMatchObject({
      action: "park",
      nextAttemptAt: T + 20 + delay,
      firstFailure: attempts === 0,
      failure: { attempts: attempts + 1, failingSince: attempts > 0 ? T - 60_000 : T + 15, error: (outcome as { error: string }).error },
    });
    // Nothing behind the failed head is sent until it is delivered.
    expect(step.state.window).toBe(1);
  });

  it.each([
    {
      name: "the last allowed attempt",
      outcome: failed(503, "SERVER_ERROR"),
      attempts: 4,
      since: T - 1000,
      reason: "attempts_exhausted",
      error: "HTTP 503",
    },
    {
      name: "410 Gone, retries left",
      outcome: failed(410, "GONE"),
      attempts: 0,
      since: null,
      reason: "gone",
      error: "suspended: the receiver answered 410 Gone (HTTP 410)",
    },
    {
      name: "failing without a success for DELIVERY_DISABLE_AFTER_MS",
      outcome: failed(500, "SERVER_ERROR"),
      attempts: 1,
      since: T - 86_400_000,
      reason: "failing_too_long",
      error: "suspended: failing without a success for 86400 s (last: HTTP 500)",
    },
  ])("$name: dead-letter ($reason)", ({ outcome, attempts, since, reason, error }) => {
    const step = deliveryStep({ ...fresh, attempts, failingSince: since }, outcome, at(0), limits, 0.5);
    expect(step).toMatchObject({ action: "dead-letter", reason, failure: { attempts: attempts + 1, error } });
  });
});

describe("slice start", () => {
  it("a head being retried goes alone; otherwise the window reached before, within the limit", () => {
    const wide = { ...limits, window: 8 };
    expect(sliceStart({ attempts: 2, failingSince: T }, T, wide, 1000, 8).window).toBe(1);
    expect(sliceStart({ attempts: 0, failingSince: null }, T, wide, 1000, 4).window).toBe(4);
    expect(sliceStart({ attempts: 0, failingSince: null }, T, limits, 1000, 4).window).toBe(1);
    expect(sliceStart({ attempts: 0, failingSince: null }, T, wide, 1000, 1)).toEqual({ ...fresh, endsAt: T + 1000 });
  });

  it.each([
    { name: "gone", row: null, move: "stop" },
    { name: "unsubscribed", row: { active: false, deadAt: null, catchingUp: false, nextAttemptAt: 0 }, move: "stop" },
    { name: "dead-lettered", row: { active: true, deadAt: T, catchingUp: false, nextAttemptAt: 0 }, move: "stop" },
    { name: "resumed, refill pending", row: { active: true, deadAt: null, catchingUp: true, nextAttemptAt: 0 }, move: "catch-up" },
    { name: "retry not yet due", row: { active: true, deadAt: null, catchingUp: false, nextAttemptAt: T + 1 }, move: "park" },
    { name: "retry due", row: { active: true, deadAt: null, catchingUp: false, nextAttemptAt: T }, move: "read" },
  ])("$name: $move", ({ row, move }) => {
    expect(sliceMove(row, T)).toBe(move);
  });
});
