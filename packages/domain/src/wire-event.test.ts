import { describe, expect, it } from "vitest";
import { Spelling } from "./spelling.ts";
import { callbackBody, callbackBodySchema, eventPlus, wireEvent, wireEventSchema } from "./wire-event.ts";

const stored = {
  topic: "com.event.test",
  content: Buffer.from("hello", "utf8"),
  extensions: { "event-format": "json" },
  eventId: "4cf7f4cc-12-3456",
  height: 3456,
  timestampMs: 1_700_000_000_123,
  txHash: "0xabc",
  sender: "0xdef",
};
const PLUS = '{"timestamp":1700000000123,"height":3456,"txHash":"0xabc","sender":"0xdef"}';
const WEEVENT = new Spelling("weevent");

describe("wireEvent", () => {
  it("E: topic, Base64 content and eventId, no extensions key", () => {
    expect(JSON.stringify(wireEvent(stored, "E"))).toBe('{"topic":"com.event.test","content":"aGVsbG8=","eventId":"4cf7f4cc-12-3456"}');
  });

  it("M: the extensions as stored, no event-plus added, keys in the original's order", () => {
    expect(JSON.stringify(wireEvent(stored, "M"))).toBe(
      '{"topic":"com.event.test","content":"aGVsbG8=","extensions":{"event-format":"json"},"eventId":"4cf7f4cc-12-3456"}',
    );
  });

  it("L: adds event-plus as a JSON string {timestamp, height, txHash, sender}", () => {
    const ev = wireEvent(stored, "L");
    expect(Object.keys(ev)).toEqual(["topic", "content", "extensions", "eventId"]);
    expect(ev).toEqual({
      ...JSON.parse(JSON.stringify(wireEvent(stored, "M"))),
      extensions: { "event-format": "json", "event-plus": PLUS },
    });
    expect(eventPlus(stored)).toBe(PLUS);
  });

  it("L: a client's event-plus is overwritten where it stood; M keeps it", () => {
    const withPlus = { ...stored, extensions: { "event-plus": "client value", "event-format": "json" } };
    expect(JSON.stringify(wireEvent(withPlus, "L"))).toContain(`"extensions":{"event-plus":${JSON.stringify(PLUS)},"event-format":"json"}`);
    expect(wireEvent(withPlus, "M")).toMatchObject({ extensions: { "event-plus": "client value", "event-format": "json" } });
  });

  it("L without extensions still carries event-plus; M answers empty extensions", () => {
    const bare = { ...stored, extensions: {} };
    expect(wireEvent(bare, "L")).toMatchObject({ extensions: { "event-plus": PLUS } });
    expect(wireEvent(bare, "M")).toMatchObject({ extensions: {} });
  });

  it("does not change the stored extensions object", () => {
    const ext = { "event-format": "json" };
    wireEvent({ ...stored, extensions: ext }, "L");
    expect(ext).toEqual({ "event-format": "json" });
  });

  it("BRAND=weevent: stored names shown in the original spelling (a stored weevent- name wins), with weevent-plus", () => {
    const mixed = { ...stored, extensions: { "event-format": "json", "event-tag": "a", "weevent-tag": "b" } };
    const l = wireEvent(mixed, "L", WEEVENT);
    expect(l).toMatchObject({ extensions: { "weevent-format": "json", "weevent-tag": "b", "weevent-plus": PLUS } });
    expect(l).not.toHaveProperty(["extensions", "event-plus"]);
    expect(l).not.toHaveProperty(["extensions", "event-format"]);
    expect(wireEvent(mixed, "M", WEEVENT)).toMatchObject({ extensions: { "weevent-format": "json", "weevent-tag": "b" } });
    expect(wireEvent(mixed, "E", WEEVENT)).not.toHaveProperty("extensions");
  });

  it("keeps binary-safe content", () => {
    const ev = wireEvent({ ...stored, content: Buffer.from("中文 +/=", "utf8") }, "M");
    expect(Buffer.from(ev.content, "base64").toString("utf8")).toBe("中文 +/=");
  });

  it("matches the schema of its variant", () => {
    for (const v of ["L", "M", "E"] as const) expect(wireEventSchema(v).strict().parse(wireEvent(stored, v))).toBeTruthy();
  });
});

describe("callback body", () => {
  const id = "3f9d2c41-8b7e-4a15-9c0d-6e2a71b5f804";

  it("is the original's JSON with Base64 content and keys in order", () => {
    expect(callbackBody(id, stored, "M")).toBe(
      `{"subscriptionId":"${id}","event":{"topic":"com.event.test","content":"aGVsbG8=","extensions":{"event-format":"json"},"eventId":"4cf7f4cc-12-3456"}}`,
    );
  });

  it("has no extensions key for subscriptions taken through variant E", () => {
    const body = JSON.parse(callbackBody(id, stored, "E")) as { event: Record<string, unknown> };
    expect(Object.keys(body.event)).toEqual(["topic", "content", "eventId"]);
  });

  it("shows extensions as stored (BRAND does not change callbacks) and keeps empty ones", () => {
    const weevent = { ...stored, extensions: { "weevent-format": "json", "event-tag": "t" } };
    expect(JSON.parse(callbackBody(id, weevent, "M")).event.extensions).toEqual({ "weevent-format": "json", "event-tag": "t" });
    expect(JSON.parse(callbackBody(id, { ...stored, extensions: {} }, "M")).event.extensions).toEqual({});
  });

  it("matches the callback body schema of its variant", () => {
    for (const v of ["M", "E"] as const) {
      const body = JSON.parse(callbackBody(id, stored, v)) as unknown;
      expect(callbackBodySchema(v).strict().parse(body)).toEqual(body);
    }
  });
});
