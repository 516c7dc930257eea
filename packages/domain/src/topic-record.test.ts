import { describe, expect, it } from "vitest";
import { decodeChainRecord } from "./chain-record.ts";
import {
  decodeTopicRecord,
  encodeTopicRecord,
  type TopicRecord,
  topicRecordKey,
  topicsDueBefore,
  topicsInCreationOrder,
} from "./topic-record.ts";

const topic = (name: string, createdAtMs: number): TopicRecord => ({
  v: 1,
  kind: "topic",
  groupId: "1",
  name,
  address: `0x${name}`,
  creator: "0xc",
  createdAtMs,
});

describe("topic records", () => {
  it("round-trip, and are never mistaken for a block's chain record (nor the reverse)", () => {
    const r = topic("a.b", 5);
    expect(decodeTopicRecord(encodeTopicRecord(r))).toEqual(r);
    expect(decodeChainRecord(encodeTopicRecord(r))).toBeNull();
    expect(decodeTopicRecord(Buffer.from(JSON.stringify({ v: 1, groupId: "1", height: 3 })))).toBeNull();
    expect(decodeTopicRecord(Buffer.from("not json"))).toBeNull();
    expect(decodeTopicRecord(null)).toBeNull();
    expect(topicRecordKey("a.b")).toBe("topic:a.b");
    expect(topicRecordKey("7")).not.toMatch(/^\d+$/);
  });

  it("come back in creation order, the chain's order among equal times, once per topic", () => {
    const order = topicsInCreationOrder([
      { offset: 4, record: topic("late", 30) },
      { offset: 2, record: topic("second", 10) },
      { offset: 1, record: topic("first", 10) },
      { offset: 7, record: topic("first", 10) },
      { offset: 0, record: topic("early", 5) },
    ]);
    expect(order.map((r) => r.name)).toEqual(["early", "first", "second", "late"]);
  });

  it("are due before a block when created by its seal time or used by it, whatever the clocks said", () => {
    const pending = [topic("a", 1), topic("b", 20), topic("c", 50), topic("d", 60)];
    expect(topicsDueBefore(pending, 20, new Set(["d"])).map((r) => r.name)).toEqual(["a", "b", "d"]);
    expect(pending.map((r) => r.name)).toEqual(["c"]);
    expect(topicsDueBefore(pending, 40, new Set())).toEqual([]);
    expect(topicsDueBefore(pending, 50, new Set()).map((r) => r.name)).toEqual(["c"]);
    expect(pending).toEqual([]);
  });
});
