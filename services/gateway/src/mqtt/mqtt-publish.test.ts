import { describe, expect, it } from "vitest";
import { BrokerError, Spelling } from "@evb/domain";
import { outcomeRefusal, publishRequest, verdictRefusal, WILL_EXTENSION, willRequest } from "./mqtt-publish.ts";
import { Reason } from "./mqtt-replies.ts";

describe("an MQTT PUBLISH as a publish", () => {
  it("takes the topic verbatim and the payload as UTF-8 content; MQTT 5 `event-` user properties are extensions", () => {
    const r = publishRequest(
      { topic: "a/b", payload: Buffer.from("héllo"), userProperties: { "event-tag": ["x", "y"], other: "z", "idempotency-key": "k1" } },
      "2",
      "10.0.0.1",
    );
    expect(r).toEqual({
      group: "2",
      topic: "a/b",
      content: "héllo",
      extensions: { "event-tag": "x" },
      remoteIp: "10.0.0.1",
      idempotencyKey: "k1",
    });
  });

  it("takes the MQTT 5 user properties traceparent and tracestate as the client's trace context", () => {
    const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const r = publishRequest({ topic: "a", payload: "x", userProperties: { traceparent: tp, tracestate: ["v=1", "w=2"] } }, "1", "");
    expect(r).toMatchObject({ trace: { traceparent: tp, tracestate: "v=1" }, extensions: {} });
    expect(publishRequest({ topic: "a", payload: "x" }, "1", "")).not.toHaveProperty("trace");
  });

  it("refuses what the broker refuses, with MQTT 5 reason codes and the broker's words", () => {
    expect(publishRequest({ topic: "a/+", payload: Buffer.from("x") }, "1", "")).toEqual({
      reason: Reason.TOPIC_NAME_INVALID,
      message: "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#) (100106)",
    });
    expect(publishRequest({ topic: "a", payload: Buffer.alloc(0) }, "1", "")).toMatchObject({ reason: Reason.PAYLOAD_FORMAT_INVALID });
    expect(publishRequest({ topic: "a", payload: Buffer.from([0xff, 0xfe]) }, "1", "")).toMatchObject({
      reason: Reason.PAYLOAD_FORMAT_INVALID,
    });
    expect(publishRequest({ topic: "a", payload: "x", userProperties: { "idempotency-key": "bad key" } }, "1", "")).toMatchObject({
      reason: Reason.UNSPECIFIED,
    });
  });

  it("a will carries the event-willmessage extension", () => {
    expect(willRequest({ topic: "a", payload: "bye" }, "1", "")).toMatchObject({ extensions: { [WILL_EXTENSION]: WILL_EXTENSION } });
  });

  it("under BRAND=weevent a will carries weevent-willmessage, key and value (protocols.md 8)", () => {
    const r = willRequest({ topic: "a", payload: "bye" }, "1", "", new Spelling("weevent"));
    expect(r).toMatchObject({ extensions: { "weevent-willmessage": "weevent-willmessage" } });
  });

  it("only a sealed event is a success; a timeout or a refusal is a failure with its reason", () => {
    expect(outcomeRefusal({ status: "SUCCESS", eventId: "e" })).toBeNull();
    expect(outcomeRefusal({ status: "TIMEOUT" })).toMatchObject({
      reason: Reason.UNSPECIFIED,
      message: expect.stringMatching(/may still be stored/),
    });
    expect(outcomeRefusal({ status: "ERROR", err: BrokerError.of("IDEMPOTENCY_KEY_REUSED") })).toMatchObject({
      message: expect.stringMatching(/100211/),
    });
    expect(outcomeRefusal({ status: "ERROR", err: new Error("kafka") })).toMatchObject({ reason: Reason.UNSPECIFIED });
    expect(verdictRefusal("forbidden").reason).toBe(Reason.NOT_AUTHORIZED);
    expect(verdictRefusal({ retryAfterMs: 5 }).reason).toBe(Reason.QUOTA_EXCEEDED);
  });
});
