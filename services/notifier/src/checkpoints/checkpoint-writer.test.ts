import { describe, expect, it } from "vitest";
import { decodeSubscriptionEntry, silentLogger } from "@evb/domain";
import type { DeliveredCursor } from "@evb/storage";
import { CheckpointWriter } from "./checkpoint-writer.ts";

const cursor = (id: string, height: number, count: number, groupId = "1"): DeliveredCursor => ({
  id,
  groupId,
  delivered: { height, idx: 2_147_483_647 },
  deliveredCount: count,
});

function setup(cursors: () => DeliveredCursor[]) {
  const asked: number[] = [];
  const written: { topic: string; ids: string[] }[] = [];
  let failNext = false;
  let now = 1_000_000;
  const writer = new CheckpointWriter({
    cursors: {
      deliveredSince: async (since) => {
        asked.push(since);
        return cursors();
      },
    },
    topics: {
      writeMessages: async (topic, messages) => {
        if (failNext) {
          failNext = false;
          throw new Error("broker down");
        }
        written.push({ topic, ids: messages.map((m) => decodeSubscriptionEntry(m.value)?.id ?? "?") });
      },
    },
    topicPrefix: "p.",
    intervalMs: 5_000,
    logger: silentLogger,
    now: () => now,
  });
  return {
    writer,
    asked,
    written,
    failWrite: () => {
      failNext = true;
    },
    tick: (ms: number) => {
      now += ms;
    },
  };
}

describe("CheckpointWriter", () => {
  it("writes every delivering subscription first, then only those whose cursor moved, per group topic", async () => {
    let list = [cursor("a", 3, 3), cursor("b", 4, 9, "2")];
    const t = setup(() => list);
    expect(await t.writer.runOnce()).toBe(true);
    expect(t.written).toEqual([
      { topic: "p.subscriptions.1", ids: ["a"] },
      { topic: "p.subscriptions.2", ids: ["b"] },
    ]);
    list = [cursor("a", 3, 3), cursor("b", 5, 10, "2")];
    t.tick(5_000);
    await t.writer.runOnce();
    expect(t.written.slice(2)).toEqual([{ topic: "p.subscriptions.2", ids: ["b"] }]);
  });

  it("asks for everything at first, then from the last run back by an interval and a clock margin", async () => {
    const t = setup(() => []);
    await t.writer.runOnce();
    t.tick(5_000);
    await t.writer.runOnce();
    expect(t.asked).toEqual([0, 1_000_000 - 5_000 - 60_000]);
  });

  it("a failed write is written again at the next run (nothing is taken as checkpointed that Kafka lacks)", async () => {
    const t = setup(() => [cursor("a", 3, 3)]);
    t.failWrite();
    expect(await t.writer.runOnce()).toBe(false);
    expect(t.written).toEqual([]);
    expect(await t.writer.runOnce()).toBe(true);
    expect(t.written).toEqual([{ topic: "p.subscriptions.1", ids: ["a"] }]);
    // The run that failed did not count as a run: the next asks from the beginning again.
    expect(t.asked).toEqual([0, 0]);
  });
});
