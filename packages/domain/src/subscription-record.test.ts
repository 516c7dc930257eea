import { describe, expect, it } from "vitest";
import {
  type DeliveryCheckpoint,
  decodeSubscriptionEntry,
  encodeSubscriptionEntry,
  recordedState,
  type SubscriptionRecord,
  subscriptionStates,
} from "./subscription-record.ts";

const record = (over: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  v: 1,
  kind: "subscription",
  groupId: "1",
  id: "a",
  topic: "com.x",
  matchRule: "M",
  bodyVariant: "M",
  url: "http://127.0.0.1:9/cb",
  nodeInstance: "127.0.0.1:8080",
  remoteIp: "127.0.0.1",
  interfaceType: "restful",
  owner: "127.0.0.1",
  createdAtMs: 1,
  active: true,
  delivered: { height: 5, idx: 2_147_483_647 },
  deliveredCount: 0,
  unsubscribedBy: null,
  unsubscribedAtMs: null,
  endings: [],
  ...over,
});
const checkpoint = (height: number, idx: number, count: number, over: Partial<DeliveryCheckpoint> = {}): DeliveryCheckpoint => ({
  v: 1,
  kind: "checkpoint",
  groupId: "1",
  id: "a",
  delivered: { height, idx },
  deliveredCount: count,
  atMs: 2,
  ...over,
});

describe("subscription entries", () => {
  it("round-trip, and anything else decodes to null", () => {
    for (const e of [record(), checkpoint(7, 1, 3)]) expect(decodeSubscriptionEntry(encodeSubscriptionEntry(e))).toEqual(e);
    expect(decodeSubscriptionEntry(Buffer.from('{"v":1,"kind":"topic"}'))).toBeNull();
    expect(decodeSubscriptionEntry(Buffer.from("not json"))).toBeNull();
    expect(decodeSubscriptionEntry(null)).toBeNull();
  });
});

describe("subscriptionStates", () => {
  it("keeps each subscription's latest record and the furthest delivered position", () => {
    const states = subscriptionStates(
      [record(), checkpoint(9, 3, 12), record({ url: "http://127.0.0.1:9/new", delivered: { height: 8, idx: 0 }, deliveredCount: 10 })],
      "1",
    );
    expect(states).toEqual([
      {
        record: record({ url: "http://127.0.0.1:9/new", delivered: { height: 8, idx: 0 }, deliveredCount: 10 }),
        delivered: { height: 9, idx: 3 },
        deliveredCount: 12,
      },
    ]);
  });

  it("a later record further on wins over an older checkpoint (an unsubscribe after more deliveries)", () => {
    const [s] = subscriptionStates(
      [checkpoint(9, 3, 12), record({ active: false, delivered: { height: 9, idx: 5 }, deliveredCount: 14 })],
      "1",
    );
    expect(s?.delivered).toEqual({ height: 9, idx: 5 });
    expect(s?.deliveredCount).toBe(14);
  });

  it("ignores other groups and checkpoints without a record", () => {
    expect(subscriptionStates([record({ groupId: "2" }), checkpoint(3, 0, 1)], "1")).toEqual([]);
  });
});

describe("recordedState", () => {
  it("ignores the delivery position, not what a change can make stale", () => {
    expect(recordedState(record({ delivered: { height: 99, idx: 0 }, deliveredCount: 5 }))).toBe(recordedState(record()));
    expect(recordedState(record({ active: false }))).not.toBe(recordedState(record()));
    expect(recordedState(record({ url: "http://other/" }))).not.toBe(recordedState(record()));
  });
});
