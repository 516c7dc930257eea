import { describe, expect, it } from "vitest";
import { type StateInput, subscriptionState } from "./subscription-state.ts";

const healthy: StateInput = { deadAt: null, attempts: 0, nextAttemptAt: 0, pending: 0, failingSince: null, lastError: null };

describe("subscriptionState", () => {
  it("a subscription with nothing waiting is caught up", () => {
    expect(subscriptionState(healthy)).toEqual({ state: "caught-up", nextAttemptAt: null, failingSince: null, lastError: null });
  });

  it("events waiting without a failure are being delivered", () => {
    expect(subscriptionState({ ...healthy, pending: 3 }).state).toBe("delivering");
  });

  it("a receiver failing for minutes with 15 events waiting is retrying, not delivering", () => {
    const failing = {
      ...healthy,
      pending: 15,
      attempts: 9,
      nextAttemptAt: 1_700_000_300_000,
      failingSince: 1_700_000_000_000,
      lastError: "HTTP 503",
    };
    expect(subscriptionState(failing)).toEqual({
      state: "retrying",
      nextAttemptAt: 1_700_000_300_000,
      failingSince: 1_700_000_000_000,
      lastError: "HTTP 503",
    });
  });

  it("a dead letter is suspended, with its last error and no next attempt", () => {
    const dead = { ...healthy, pending: 4, attempts: 3, deadAt: 1_700_000_400_000, failingSince: 1_700_000_000_000, lastError: "HTTP 410" };
    expect(subscriptionState(dead)).toMatchObject({ state: "suspended", nextAttemptAt: null, lastError: "HTTP 410" });
  });

  it("a stale last error of a subscription that delivers again is not shown", () => {
    expect(subscriptionState({ ...healthy, pending: 1, lastError: "HTTP 503" }).lastError).toBeNull();
  });

  it("a pause, once rows carry one, wins over every other state", () => {
    expect(subscriptionState({ ...healthy, deadAt: 1, attempts: 2, pausedAt: 5 }).state).toBe("paused");
    expect(subscriptionState({ ...healthy, paused: true }).state).toBe("paused");
    expect(subscriptionState({ ...healthy, paused: false, pausedAt: null }).state).toBe("caught-up");
  });
});
