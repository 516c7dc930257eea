import { describe, expect, it } from "vitest";
import { BrokerError, NEUTRAL_SPELLING, Spelling } from "@evb/domain";
import type { StompFrame } from "./stomp-frame.ts";
import { sendReply, sendRequest } from "./stomp-send.ts";

const GROUPS = new Set(["1"]);
const send = (headers: [string, string][], body = "hello"): StompFrame => ({ command: "SEND", headers, body });
const code = (r: unknown) => (r instanceof BrokerError ? r.code : null);
/** A SEND to `t` with these extra headers, as a publish or its error. */
const keyed = (...headers: [string, string][]) => sendRequest(send([["destination", "t"], ...headers]), GROUPS, "127.0.0.1");

describe("sendRequest", () => {
  it("carries an idempotency-key header as the publish's key, not as an extension", () => {
    expect(keyed(["idempotency-key", "order-4711"], ["event-a", "1"])).toMatchObject({
      topic: "t",
      idempotencyKey: "order-4711",
      extensions: { "event-a": "1" },
    });
  });

  it("without the header the publish has no key; a repeated header's first value wins", () => {
    expect(keyed()).toMatchObject({ idempotencyKey: undefined });
    expect(keyed(["idempotency-key", "a"], ["idempotency-key", "b"])).toMatchObject({ idempotencyKey: "a" });
    // Case-sensitive, as every STOMP header: the HTTP spelling is not read.
    expect(keyed(["Idempotency-Key", "a"])).toMatchObject({ idempotencyKey: undefined });
  });

  it("carries the traceparent and tracestate headers as the client's trace context, not as extensions", () => {
    const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(keyed(["traceparent", tp], ["tracestate", "v=1"])).toMatchObject({
      trace: { traceparent: tp, tracestate: "v=1" },
      extensions: {},
    });
    expect(keyed(["traceparent", tp])).toMatchObject({ trace: { traceparent: tp } });
    expect(keyed(["tracestate", "v=1"])).not.toHaveProperty("trace");
  });

  it("a key not of 1-255 visible ASCII characters is 100210, after the event's own checks", () => {
    for (const bad of ["", "has space", "x".repeat(256), "é"]) {
      expect(code(keyed(["idempotency-key", bad])), bad).toBe(100210);
    }
    // A missing destination (100103) is found before the key.
    expect(code(sendRequest(send([["idempotency-key", " "]]), GROUPS, "127.0.0.1"))).toBe(100103);
  });
});

describe("sendRequest extension headers (protocols.md 8)", () => {
  const headers: [string, string][] = [
    ["destination", "t"],
    ["event-tag", "a"],
    ["weevent-format", "json"],
    ["weevent-format", "second"],
    ["receipt", "1"],
    ["weeventx", "no"],
  ];

  it("by default reads event- headers only: a weevent- header is an ordinary one, not stored", () => {
    const req = sendRequest(send(headers), GROUPS, "127.0.0.1", NEUTRAL_SPELLING);
    expect(req).toMatchObject({ extensions: { "event-tag": "a" } });
    expect(Object.keys((req as { extensions: object }).extensions)).toEqual(["event-tag"]);
  });

  it("under BRAND=weevent reads weevent- and event- headers, first value each, stored under the name sent", () => {
    const req = sendRequest(send(headers), GROUPS, "127.0.0.1", new Spelling("weevent"));
    expect((req as { extensions: object }).extensions).toEqual({ "event-tag": "a", "weevent-format": "json" });
  });
});

describe("sendReply", () => {
  it("a key reused for other content (100211) answers its coded ERROR; other failures the SendResult's", () => {
    const reused = sendReply({ status: "ERROR", err: BrokerError.of("IDEMPOTENCY_KEY_REUSED") }, "t", "r1");
    expect(reused).toContain("\ncode:100211\n");
    expect(reused).toContain("\nreceipt-id:r1\n");
    const kafka = sendReply({ status: "ERROR", err: new Error("down") }, "t", "r2");
    expect(kafka).toContain("message:SendResult(status=ERROR, topic=t, eventId=null)");
    expect(kafka).not.toContain("\ncode:");
  });
});
