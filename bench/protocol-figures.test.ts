import { describe, expect, it } from "vitest";
import type { Delivery } from "./protocol-clients.ts";
import { checkStream, deliveryLatency, deliveryRate, latencyGoal, publishGoal, rateWithin } from "./protocol-figures.ts";
import { keyedContent } from "./protocol-publisher.ts";

// eventIds are hash-seq-height.
const acked = new Map([
  ["a-1-10", "s/t0"],
  ["b-1-10", "s/t1"],
  ["a-2-11", "s/t0"],
]);
const d = (topic: string, eventId: string, at = 0): Delivery => [topic, eventId, at];

describe("checkStream", () => {
  it("accepts every acknowledged event once, in ledger order, and one sealed but unanswered within the bound", () => {
    const c = checkStream([d("s/t0", "a-1-10"), d("s/t1", "b-1-10"), d("s/t0", "a-2-11"), d("s/t1", "b-2-12")], acked, 1);
    expect(c).toMatchObject({ acknowledged: 3, received: 4, missing: 0, duplicates: 0, unacknowledged: 1, outOfOrder: 0, ok: true });
    expect(checkStream([d("s/t0", "a-1-10"), d("s/t1", "b-1-10"), d("s/t0", "a-2-11"), d("s/t1", "b-2-12")], acked, 0).ok).toBe(false);
  });

  it("counts missing, repeated and misrouted events", () => {
    const c = checkStream([d("s/t0", "a-1-10"), d("s/t0", "a-1-10"), d("s/t0", "b-1-10")], acked, 0);
    expect(c).toMatchObject({ missing: 1, duplicates: 1, misrouted: 1, ok: false });
  });

  it("counts an event of a lower block, or of a topic's lower sequence number, as out of order", () => {
    expect(checkStream([d("s/t0", "a-2-11"), d("s/t1", "b-1-10"), d("s/t0", "a-1-10")], acked, 0).outOfOrder).toBe(2);
    // Two topics in one block may come in either order.
    expect(checkStream([d("s/t1", "b-1-10"), d("s/t0", "a-1-10"), d("s/t0", "a-2-11")], acked, 0).ok).toBe(true);
  });
});

describe("deliveryRate", () => {
  it("counts deliveries per second from the first arrival to the last", () => {
    expect(deliveryRate([d("t", "x", 1000), d("t", "y", 1500), d("t", "z", 2000)])).toBe(2);
    expect(deliveryRate([d("t", "x", 1000)])).toBe(0);
  });
});

describe("deliveryLatency", () => {
  it("measures each event's first delivery from its send time, skipping events sent by nobody known", () => {
    const sent = new Map([
      ["x", 100],
      ["y", 200],
    ]);
    const l = deliveryLatency([d("t", "x", 110), d("t", "y", 230), d("t", "x", 500), d("t", "z", 900)], sent);
    expect(l).toEqual({ p50: 10, p90: 30, p99: 30, max: 30 });
  });
});

describe("goals", () => {
  it("wants a one-connection publisher at least as fast as HTTP at 8 connections", () => {
    expect(publishGoal(900, 800)).toEqual({ ratio: 1.125, met: true });
    expect(publishGoal(400, 800)).toEqual({ ratio: 0.5, met: false });
    expect(publishGoal(400, 0)).toEqual({ ratio: null, met: false });
  });

  it("wants a protocol's p99 no worse than the callbacks'", () => {
    expect(latencyGoal(40, 80)).toEqual({ ratio: 0.5, met: true });
    expect(latencyGoal(120, 80).met).toBe(false);
  });
});

describe("keyedContent", () => {
  it("starts each content with its own key and pads it to the size asked", () => {
    expect(keyedContent(42, 10)).toBe("k42|xxxxxx");
    expect(keyedContent(12345, 4)).toBe("k12345|");
  });
});

describe("rateWithin", () => {
  it("counts only the deliveries inside the window, per second of it", () => {
    const ds = [d("s/t0", "a", 900), d("s/t0", "b", 1000), d("s/t0", "c", 1500), d("s/t0", "e", 2000), d("s/t0", "f", 2600)];
    expect(rateWithin(ds, 1000, 2000)).toBe(3);
    expect(rateWithin(ds, 2000, 2000)).toBe(0);
  });
});
