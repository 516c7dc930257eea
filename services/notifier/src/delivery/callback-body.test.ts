import { describe, expect, it } from "vitest";
import { callbackBody } from "./callback-body.ts";

const item = {
  topic: "com.event.test",
  content: Buffer.from("hello", "utf8"),
  extensions: { "event-format": "json" },
  eventId: "4cf7f4cc-12-3456",
};

describe("callback body", () => {
  it("is the original's JSON with Base64 content and keys in order", () => {
    const id = "3f9d2c41-8b7e-4a15-9c0d-6e2a71b5f804";
    expect(callbackBody(id, item, "M")).toBe(
      `{"subscriptionId":"${id}","event":{"topic":"com.event.test","content":"aGVsbG8=","extensions":{"event-format":"json"},"eventId":"4cf7f4cc-12-3456"}}`,
    );
  });

  it("has no extensions key for subscriptions taken through variant E", () => {
    const body = JSON.parse(callbackBody("x", item, "E")) as { event: Record<string, unknown> };
    expect(Object.keys(body.event)).toEqual(["topic", "content", "eventId"]);
  });

  it("keeps binary-safe content and empty extensions", () => {
    const body = JSON.parse(callbackBody("x", { ...item, content: Buffer.from("中文 +/=", "utf8"), extensions: {} }, "M")) as {
      event: { content: string; extensions: object };
    };
    expect(Buffer.from(body.event.content, "base64").toString("utf8")).toBe("中文 +/=");
    expect(body.event.extensions).toEqual({});
  });
});
