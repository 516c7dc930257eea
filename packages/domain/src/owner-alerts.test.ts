import { describe, expect, it } from "vitest";
import { type AlertState, alertBody, alertTransition, alertWebhookId, type DeliveryOutcome, mayRaiseAlert } from "./owner-alerts.ts";

const failed = (consecutiveFailures: number, dead = false): DeliveryOutcome => ({ kind: "failed", consecutiveFailures, dead });
const delivered: DeliveryOutcome = { kind: "delivered" };

/** Runs outcomes from "ok" and collects the alerts raised, in order. */
function alertsOf(outcomes: DeliveryOutcome[], failingAfter = 3): string[] {
  let state: AlertState = "ok";
  const raised: string[] = [];
  for (const o of outcomes) {
    const t = alertTransition(state, o, failingAfter);
    state = t.next;
    if (t.alert) raised.push(t.alert);
  }
  return raised;
}

describe("alertTransition", () => {
  it("raises failing once when the failed attempts in a row reach the threshold, not once per attempt", () => {
    expect(alertsOf([failed(1), failed(2)])).toEqual([]);
    expect(alertsOf([failed(1), failed(2), failed(3), failed(4), failed(5)])).toEqual(["subscription.failing"]);
  });

  it("raises suspended on the dead letter, after failing or without it (410 Gone at the first attempt)", () => {
    expect(alertsOf([failed(1), failed(2), failed(3), failed(4, true)])).toEqual(["subscription.failing", "subscription.suspended"]);
    expect(alertsOf([failed(1, true)])).toEqual(["subscription.suspended"]);
  });

  it("raises recovered at the first delivery after failing or suspended, and nothing for a delivery while ok", () => {
    expect(alertsOf([delivered, delivered])).toEqual([]);
    expect(alertsOf([failed(3), delivered, delivered])).toEqual(["subscription.failing", "subscription.recovered"]);
    expect(alertsOf([failed(1, true), delivered])).toEqual(["subscription.suspended", "subscription.recovered"]);
  });

  it("a replayed subscription that fails again stays suspended until it is dead-lettered again, which alerts again", () => {
    // Replay resets the attempts but not the alert state: failing is not raised twice in one run.
    expect(alertsOf([failed(3), failed(4, true), failed(1), failed(3), failed(4, true)])).toEqual([
      "subscription.failing",
      "subscription.suspended",
      "subscription.suspended",
    ]);
  });

  it("a run of failures after a recovery raises failing again", () => {
    expect(alertsOf([failed(3), delivered, failed(1), failed(2), failed(3)])).toEqual([
      "subscription.failing",
      "subscription.recovered",
      "subscription.failing",
    ]);
  });

  it("mayRaiseAlert says when the alert state need not be read", () => {
    expect(mayRaiseAlert(2, false, 3)).toBe(false);
    expect(mayRaiseAlert(3, false, 3)).toBe(true);
    expect(mayRaiseAlert(1, true, 3)).toBe(true);
  });
});

describe("the alert as sent", () => {
  it("has the type, the time and the subscription's facts; its webhook-id is per alert", () => {
    const alert = {
      id: 42,
      type: "subscription.failing" as const,
      subscriptionId: "s1",
      groupId: "1",
      topic: "orders",
      consecutiveFailures: 5,
      lastError: "HTTP 503",
      occurredAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    };
    expect(JSON.parse(alertBody(alert))).toEqual({
      type: "subscription.failing",
      timestamp: "2026-01-02T03:04:05.000Z",
      data: { subscriptionId: "s1", topic: "orders", groupId: "1", consecutiveFailures: 5, lastError: "HTTP 503" },
    });
    expect(alertWebhookId(alert)).toBe("msg_alert_42");
  });
});
