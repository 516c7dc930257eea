import { describe, expect, it } from "vitest";
import { callbackPayload, headerSafe, rawContentType } from "./callback-payload.ts";
import { callbackBody } from "./wire-event.ts";

const ev = { topic: "orders/eu", content: Buffer.from([0x7b, 0x7d, 0xff]), extensions: { "event-format": "json" }, eventId: "ab-12-3" };

describe("the callback's payload", () => {
  it("envelope: the original's body, nothing more", () => {
    expect(callbackPayload("s1", ev, "M", "envelope")).toEqual({ body: callbackBody("s1", ev, "M"), headers: {} });
  });

  it("raw: the content's bytes as they were published, the metadata in headers", () => {
    const p = callbackPayload("s1", ev, "E", "raw");
    expect(Buffer.from(p.body as Uint8Array).equals(ev.content)).toBe(true);
    expect(p.headers).toEqual({
      "content-type": "application/json",
      "evb-event-id": "ab-12-3",
      "evb-topic": "orders/eu",
      "evb-subscription-id": "s1",
    });
  });

  it("takes the content type from event-content-type, then event-format, else octet-stream", () => {
    expect(rawContentType({})).toBe("application/octet-stream");
    expect(rawContentType({ "event-format": "XML" })).toBe("application/xml");
    expect(rawContentType({ "event-format": "application/cloudevents+json; charset=utf-8" })).toBe(
      "application/cloudevents+json; charset=utf-8",
    );
    expect(rawContentType({ "event-format": "protobuf" })).toBe("application/octet-stream");
    expect(rawContentType({ "event-format": "text/plain\r\nx-evil: 1" })).toBe("application/octet-stream");
    expect(rawContentType({ "event-content-type": "text/csv", "event-format": "json" })).toBe("text/csv");
  });

  it("keeps header values printable: anything else percent-encoded", () => {
    expect(headerSafe("a/b c")).toBe("a/b c");
    expect(headerSafe("a\u007fb")).toBe("a%7Fb");
    expect(headerSafe("50%\u0080")).toBe("50%25%C2%80");
    expect(headerSafe("x\r\ny")).toBe("x%0D%0Ay");
  });
});
