import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import type { BlockTopics } from "@evb/storage";
import { BlockWatch, TOPICS_PER_READ } from "./block-watch.ts";
import type { WatchedFeed } from "./feed-index.ts";
import type { FilterRule } from "./subscribe-request.ts";

/** The blocks channel: `nudge` publishes a BlockNudge as an indexer does. */
class FakeSubscriber extends EventEmitter {
  async subscribe(): Promise<void> {}
  async unsubscribe(): Promise<void> {}
  nudge(groupId: string, height: number): void {
    this.emit("message", "blocks", JSON.stringify({ groupId, height }));
  }
}

/** A ledger of topics per block; counts the range reads and can hold them until `release`. */
class FakeTopics {
  readonly blocks = new Map<number, string[]>();
  head = 0;
  reads: { from: number; to: number }[] = [];
  fail = false;
  private held: (() => void)[] | null = null;
  seal(...topics: string[]): number {
    this.blocks.set(++this.head, topics);
    return this.head;
  }
  hold(): void {
    this.held = [];
  }
  release(): void {
    const h = this.held ?? [];
    this.held = null;
    for (const r of h) r();
  }
  read = async (_g: string, from: number, to: number, after: string, limit: number): Promise<BlockTopics> => {
    this.reads.push({ from, to });
    if (this.held) await new Promise<void>((r) => this.held?.push(r));
    if (this.fail) throw new Error("Postgres away");
    const upTo = Math.min(to, this.head);
    const all = new Set<string>();
    for (let h = from + 1; h <= upTo; h++) for (const t of this.blocks.get(h) ?? []) all.add(t);
    return {
      head: this.head,
      topics: [...all]
        .sort()
        .filter((t) => t > after)
        .slice(0, limit),
    };
  };
}

/** A feed that records what it is told, caught up to the last height it was notified of. */
class Feed implements WatchedFeed {
  readonly told: string[] = [];
  readonly filter: { items: string[]; tag: null; rule: FilterRule };
  constructor(items: string[], rule: FilterRule = "M") {
    this.filter = { items, tag: null, rule };
  }
  heard(height: number): void {
    if (height >= 0) this.told.push(`heard ${height}`);
  }
  notify(height: number): void {
    this.told.push(`notify ${height}`);
  }
  pass(from: number, to: number): void {
    this.told.push(`pass ${from}-${to}`);
  }
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

async function watchOver(ledger: FakeTopics) {
  const subscriber = new FakeSubscriber();
  const watch = new BlockWatch({
    subscriber,
    channel: "blocks",
    head: async () => ledger.head,
    topics: ledger.read,
    pollMs: 60_000,
    logger: silentLogger,
  });
  await watch.start();
  return { watch, subscriber };
}

describe("BlockWatch: one topic read per block range for every feed of a group", () => {
  it("reads each range's topics once, whatever the number of feeds: idle ones pass without a read, concerned ones read", async () => {
    const ledger = new FakeTopics();
    const { watch, subscriber } = await watchOver(ledger);
    const idle = Array.from({ length: 5_000 }, (_, i) => new Feed([`idle/${i}/+`], "mqtt"));
    for (const f of idle) watch.watch("1", f);
    const orders = new Feed(["orders/+"]);
    const everything = new Feed(["#"], "mqtt");
    watch.watch("1", orders);
    watch.watch("1", everything);
    await settle();
    // The group's head when its first feed came (0): where its ranges start; each feed is told it.
    expect(orders.told).toEqual(["notify 0"]);
    expect(ledger.reads).toEqual([]);
    subscriber.nudge("1", ledger.seal("x"));
    subscriber.nudge("1", ledger.seal("orders/eu", "other"));
    await settle();
    expect(ledger.reads).toEqual([
      { from: 0, to: 1 },
      { from: 1, to: 2 },
    ]);
    expect(orders.told).toEqual(["notify 0", "pass 0-1", "notify 2"]);
    expect(everything.told).toEqual(["notify 0", "notify 1", "notify 2"]);
    expect(idle[42]?.told).toEqual(["notify 0", "pass 0-1", "pass 1-2"]);
    subscriber.nudge("1", ledger.seal("other"));
    await settle();
    expect(ledger.reads).toHaveLength(3);
    expect(orders.told.at(-1)).toBe("pass 2-3");
    expect(everything.told.at(-1)).toBe("notify 3");
  });

  it("gathers the nudges that come during a read into the next range; a height past the head is clamped to it", async () => {
    const ledger = new FakeTopics();
    const { watch, subscriber } = await watchOver(ledger);
    const feed = new Feed(["a"]);
    watch.watch("1", feed);
    subscriber.nudge("1", ledger.seal("a"));
    await settle();
    ledger.hold();
    subscriber.nudge("1", ledger.seal("b"));
    await settle();
    for (let i = 0; i < 5; i++) subscriber.nudge("1", ledger.seal("b"));
    ledger.release();
    await settle();
    ledger.release();
    await settle();
    expect(ledger.reads).toEqual([
      { from: 1, to: 2 },
      { from: 2, to: 7 },
    ]);
    expect(feed.told).toEqual(["notify 1", "pass 1-2", "pass 2-7"]);
    subscriber.nudge("1", 99);
    await settle();
    expect(ledger.reads.at(-1)).toEqual({ from: 7, to: 99 });
    expect(feed.told).toHaveLength(3);
    subscriber.nudge("1", ledger.seal("a"));
    await settle();
    expect(feed.told.at(-1)).toBe("notify 8");
  });

  it("a feed added while a range is read reads for itself; a removed one is told nothing", async () => {
    const ledger = new FakeTopics();
    const { watch, subscriber } = await watchOver(ledger);
    const old = new Feed(["z"]);
    const gone = new Feed(["z"]);
    watch.watch("1", old);
    const unwatch = watch.watch("1", gone);
    subscriber.nudge("1", ledger.seal("a"));
    await settle();
    ledger.hold();
    subscriber.nudge("1", ledger.seal("a"));
    await settle();
    const late = new Feed(["z"]);
    watch.watch("1", late);
    unwatch();
    ledger.release();
    await settle();
    expect(old.told).toEqual(["notify 1", "pass 1-2"]);
    expect(late.told).toEqual(["heard 2", "notify 2"]);
    expect(gone.told).toEqual(["notify 1"]);
  });

  it("pages the topics of a wide range, and a failed read is tried again by the next nudge", async () => {
    const ledger = new FakeTopics();
    const { watch, subscriber } = await watchOver(ledger);
    const last = new Feed(["t/zzzz"]);
    watch.watch("1", last);
    subscriber.nudge("1", ledger.seal("t/a"));
    await settle();
    ledger.seal(...Array.from({ length: TOPICS_PER_READ + 5 }, (_, i) => `t/${String(i).padStart(4, "0")}`), "t/zzzz");
    ledger.fail = true;
    subscriber.nudge("1", ledger.head);
    await settle();
    expect(last.told).toEqual(["notify 1"]);
    ledger.fail = false;
    subscriber.nudge("1", ledger.head);
    await settle();
    expect(ledger.reads).toHaveLength(3);
    expect(last.told).toEqual(["notify 1", "notify 2"]);
  });
});
