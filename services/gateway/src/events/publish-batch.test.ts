import { describe, expect, it } from "vitest";
import { BrokerError } from "@evb/domain";
import { batchWeight, checkBatchEvent, MAX_BATCH_EVENTS, parseBatchBody } from "./publish-batch.ts";

const codeOf = (r: unknown) => (r instanceof BrokerError ? r.code : null);
const events = (n: number) => Array.from({ length: n }, (_, i) => ({ topic: "t", content: `c${i}` }));

describe("a batch body", () => {
  it("is an object with 1 to 1000 events; anything else is 100212", () => {
    expect(parseBatchBody({ events: events(1) })).toEqual({ events: events(1) });
    expect(parseBatchBody({ events: events(MAX_BATCH_EVENTS) })).not.toBeInstanceOf(BrokerError);
    for (const bad of [null, [], "x", 1, {}, { events: {} }, { events: "a" }, { events: [] }, { events: events(MAX_BATCH_EVENTS + 1) }]) {
      expect(codeOf(parseBatchBody(bad)), JSON.stringify(bad)?.slice(0, 40)).toBe(100212);
    }
  });

  it("counts its events against the publish rate, and a body refused anyway as one", () => {
    expect(batchWeight({ events: events(37) })).toBe(37);
    expect(batchWeight({ events: events(MAX_BATCH_EVENTS + 1) })).toBe(1);
    expect(batchWeight(undefined)).toBe(1);
  });
});

describe("one event of a batch", () => {
  it("is checked as rest/publish checks one: topic and content, then names, content, extensions, key", () => {
    expect(checkBatchEvent({ topic: "t", content: "c", extensions: { "event-a": "1" }, idempotencyKey: "k-1" })).toEqual({
      topic: "t",
      content: "c",
      extensions: { "event-a": "1" },
      idempotencyKey: "k-1",
    });
    expect(checkBatchEvent({ topic: "t", content: "c" })).toEqual({ topic: "t", content: "c", extensions: {}, idempotencyKey: undefined });
    // What publish cannot read as parameters: its missing-parameter 100501.
    for (const bad of [null, "x", [], { content: "c" }, { topic: "t" }, { topic: 1, content: "c" }, { topic: "t", content: {} }]) {
      expect(codeOf(checkBatchEvent(bad)), JSON.stringify(bad)).toBe(100501);
    }
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", extensions: [] }))).toBe(100501);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", extensions: { "event-a": 1 } }))).toBe(100501);
    // The reference's order: topic before content before extensions before the key.
    expect(codeOf(checkBatchEvent({ topic: "", content: "" }))).toBe(100103);
    expect(codeOf(checkBatchEvent({ topic: "t".repeat(65), content: "" }))).toBe(100102);
    expect(codeOf(checkBatchEvent({ topic: "a+b", content: "c" }))).toBe(100106);
    expect(codeOf(checkBatchEvent({ topic: "t", content: " ", extensions: { x: "1" } }))).toBe(100200);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c".repeat(10_241) }))).toBe(100201);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", extensions: { x: "1" }, idempotencyKey: "bad key" }))).toBe(100206);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", extensions: { "event-a": "x".repeat(1100) } }))).toBe(100204);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", idempotencyKey: "bad key" }))).toBe(100210);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", idempotencyKey: 7 }))).toBe(100210);
    expect(codeOf(checkBatchEvent({ topic: "t", content: "c", idempotencyKey: "" }))).toBe(100210);
  });
});
