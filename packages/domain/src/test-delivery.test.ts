import { describe, expect, it } from "vitest";
import { TestDeliveryRequest, testEvent, testEventId } from "./test-delivery.ts";
import { callbackBody } from "./wire-event.ts";

describe("test delivery", () => {
  const requestId = "3f9d2c41-8b7e-4a15-9c0d-6e2a71b5f804";

  it("carries an event id no ledger event has, and a JSON content marked as a test", () => {
    expect(testEventId(requestId)).toBe(`test_${requestId}`);
    const ev = testEvent("a/+", requestId);
    expect(ev.topic).toBe("a/+");
    expect(JSON.parse(ev.content.toString("utf8"))).toMatchObject({ test: true });
    const body = JSON.parse(callbackBody("sub-1", ev, "M"));
    expect(body).toMatchObject({
      subscriptionId: "sub-1",
      event: { eventId: `test_${requestId}`, extensions: { "event-format": "json" } },
    });
  });

  it("checks a request at the boundary", () => {
    const ok = { requestId, subscriptionId: "s", url: "http://127.0.0.1/x", variant: "M", topic: "t" };
    expect(TestDeliveryRequest.safeParse(ok).success).toBe(true);
    expect(TestDeliveryRequest.safeParse({ ...ok, requestId: "x" }).success).toBe(false);
    expect(TestDeliveryRequest.safeParse({ ...ok, variant: "L" }).success).toBe(false);
  });
});
