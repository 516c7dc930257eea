import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { AFTER_BLOCK, type FeedEvent, type FeedPosition } from "@evb/storage";
import { EVENTS_PER_TURN, type FrameSink, type LedgerFeed, LedgerSubscription } from "./ledger-subscription.ts";
import { messageFrame } from "./stomp-replies.ts";

/** A ledger in memory: events in (height, idx) order; `fail` makes the next read throw. */
class FakeLedger implements LedgerFeed {
  readonly events: FeedEvent[] = [];
  reads = 0;
  heads = 0;
  fail = false;
  add(height: number, topic: string, ext: Record<string, string> = {}): void {
    const idx = this.events.filter((e) => e.height === height).length;
    const eventId = `${height}.${idx}`;
    this.events.push({
      height,
      idx,
      eventId,
      topic,
      content: Buffer.from(eventId),
      extensions: ext,
      sender: "0x",
      txHash: "0x",
      timestampMs: 0,
    });
  }
  async head(): Promise<number> {
    this.heads++;
    return this.events.at(-1)?.height ?? 0;
  }
  async after(_g: string, after: FeedPosition, upTo: number, limit: number, topics: readonly string[] | null): Promise<FeedEvent[]> {
    this.reads++;
    if (this.fail) {
      this.fail = false;
      throw new Error("Postgres away");
    }
    const later = (e: FeedEvent) => e.height > after.height || (e.height === after.height && e.idx > after.idx);
    return this.events.filter((e) => later(e) && e.height <= upTo && (!topics || topics.includes(e.topic))).slice(0, limit);
  }
}

/** A socket that is full until `drain()` once `full` is set. */
class FakeSink implements FrameSink {
  readonly sent: string[] = [];
  open = true;
  full = false;
  private waiting: (() => void)[] = [];
  send(text: string): void {
    this.sent.push(text);
  }
  room(): Promise<void> {
    if (!this.full) return Promise.resolve();
    return new Promise((r) => this.waiting.push(r));
  }
  drain(): void {
    this.full = false;
    for (const w of this.waiting.splice(0)) w();
  }
  ids(): string[] {
    return this.sent.map((t) => /\neventId:([^\n]+)/.exec(t)?.[1] as string);
  }
}

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

function subscription(ledger: FakeLedger, sink: FakeSink, items: string[], start: FeedPosition, pageSize = 2, rule?: "mqtt") {
  return new LedgerSubscription({
    id: "s",
    send: (event) => sink.send(messageFrame({ handle: "1", subscriptionId: "s" }, event)),
    group: "1",
    filter: { items, tag: null, ...(rule ? { rule } : {}) },
    start,
    feed: ledger,
    sink,
    pageSize,
    onDelivered: () => {},
    now: () => 0,
    logger: silentLogger,
  });
}

describe("LedgerSubscription", () => {
  it("sends the history after its start in ledger order, page by page, then live blocks once notified", async () => {
    const ledger = new FakeLedger();
    for (const [h, t] of [
      [1, "a"],
      [1, "b"],
      [2, "a"],
      [3, "a"],
      [3, "a"],
    ] as const)
      ledger.add(h, t);
    const sink = new FakeSink();
    const sub = subscription(ledger, sink, ["a"], { height: 1, idx: 0 });
    sub.kick();
    await settle();
    expect(sink.ids()).toEqual(["2.0", "3.0", "3.1"]);
    ledger.add(4, "a");
    sub.notify(3);
    await settle();
    expect(sink.ids()).toHaveLength(3);
    sub.notify(4);
    await settle();
    expect(sink.ids()).toEqual(["2.0", "3.0", "3.1", "4.0"]);
  });

  it("reads a pattern's events unfiltered by SQL, moving past events it does not take", async () => {
    const ledger = new FakeLedger();
    for (let h = 1; h <= 5; h++) ledger.add(h, h % 2 ? "x/y" : "x");
    const sink = new FakeSink();
    subscription(ledger, sink, ["x/#"], { height: 0, idx: AFTER_BLOCK }).kick();
    await settle();
    expect(sink.ids()).toEqual(["1.0", "3.0", "5.0"]);
  });

  it("reads no further while the socket is full: what is sent stays bounded", async () => {
    const ledger = new FakeLedger();
    for (let h = 1; h <= 50; h++) ledger.add(h, "a");
    const sink = new FakeSink();
    sink.full = true;
    subscription(ledger, sink, ["a"], { height: 0, idx: AFTER_BLOCK }, 10).kick();
    await settle();
    expect(sink.sent).toHaveLength(0);
    expect(ledger.reads).toBe(0);
    sink.drain();
    await settle();
    expect(sink.ids()).toHaveLength(50);
    expect(sink.ids()[49]).toBe("50.0");
  });

  it("after a failed read it retries from the same cursor: nothing skipped, nothing twice", async () => {
    const ledger = new FakeLedger();
    for (let h = 1; h <= 3; h++) ledger.add(h, "a");
    const sink = new FakeSink();
    const sub = subscription(ledger, sink, ["a"], { height: 0, idx: AFTER_BLOCK });
    ledger.fail = true;
    sub.kick();
    await settle();
    expect(sink.sent).toHaveLength(0);
    sub.kick();
    await settle();
    expect(sink.ids()).toEqual(["1.0", "2.0", "3.0"]);
    sub.close();
  });

  it("sends nothing once closed", async () => {
    const ledger = new FakeLedger();
    ledger.add(1, "a");
    const sink = new FakeSink();
    const sub = subscription(ledger, sink, ["a"], { height: 0, idx: AFTER_BLOCK });
    sub.close();
    sub.kick();
    await settle();
    expect(sink.sent).toEqual([]);
  });

  it("a page is matched EVENTS_PER_TURN events per turn of the loop: one page of a long list never holds it", async () => {
    const ledger = new FakeLedger();
    for (let i = 0; i < 1_000; i++) ledger.add(1, `t/${i}`);
    const sink = new FakeSink();
    // 100 patterns that take nothing, and one that takes every event, as a long destination list.
    const items = [...Array.from({ length: 100 }, (_, i) => `+/${i}/+`), "t/+"];
    subscription(ledger, sink, items, { height: 0, idx: AFTER_BLOCK }, 1_000).kick();
    for (let i = 0; i < 1_000; i++) await Promise.resolve();
    expect(sink.sent.length).toBeGreaterThan(0);
    expect(sink.sent.length).toBeLessThanOrEqual(EVENTS_PER_TURN);
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 1_000; i++) await Promise.resolve();
    expect(sink.sent.length).toBeLessThanOrEqual(2 * EVENTS_PER_TURN);
    for (let i = 0; i < 40; i++) await settle();
    expect(sink.ids()).toHaveLength(1_000);
  });

  it("a range that holds none of its topics moves a caught-up subscription on without a read", async () => {
    const ledger = new FakeLedger();
    ledger.add(1, "a");
    const sink = new FakeSink();
    const sub = subscription(ledger, sink, ["a"], { height: 1, idx: AFTER_BLOCK });
    sub.heard(1);
    sub.kick();
    await settle();
    for (let h = 2; h <= 50; h++) {
      ledger.add(h, "b");
      sub.pass(h - 1, h);
    }
    await settle();
    expect(ledger.reads).toBe(0);
    expect(ledger.heads).toBe(0);
    expect(sub.position).toEqual({ height: 50, idx: AFTER_BLOCK });
    // Told of a block it may take: reads from there up to the height it was told, without reading the head.
    ledger.add(51, "a");
    sub.notify(51);
    await settle();
    expect(sink.ids()).toEqual(["51.0"]);
    expect(ledger.heads).toBe(0);
    expect(ledger.reads).toBe(1);
  });

  it("watched by the block watch, a new subscription reads no head of its own: it reads up to the height it heard, or waits to be told", async () => {
    const ledger = new FakeLedger();
    for (let h = 1; h <= 3; h++) ledger.add(h, "a");
    const fresh = new FakeSink();
    const caughtUp = subscription(ledger, fresh, ["a"], { height: 3, idx: AFTER_BLOCK });
    caughtUp.heard(3);
    caughtUp.kick();
    const behind = new FakeSink();
    const old = subscription(ledger, behind, ["a"], { height: 1, idx: AFTER_BLOCK });
    old.heard(3);
    old.kick();
    await settle();
    expect(ledger.heads).toBe(0);
    expect(fresh.sent).toEqual([]);
    expect(behind.ids()).toEqual(["2.0", "3.0"]);
  });

  it("nothing is read before its first kick (the RECEIPT or SUBACK goes first), whatever it is told", async () => {
    const ledger = new FakeLedger();
    ledger.add(1, "a");
    const sink = new FakeSink();
    const sub = subscription(ledger, sink, ["a"], { height: 0, idx: AFTER_BLOCK });
    sub.heard(1);
    sub.notify(1);
    await settle();
    expect(ledger.reads).toBe(0);
    sub.kick();
    await settle();
    expect(sink.ids()).toEqual(["1.0"]);
  });

  it("a subscription behind the range reads it instead of passing it", async () => {
    const ledger = new FakeLedger();
    for (let h = 1; h <= 3; h++) ledger.add(h, "a");
    const sink = new FakeSink();
    const sub = subscription(ledger, sink, ["a"], { height: 0, idx: AFTER_BLOCK });
    sub.heard(0);
    sub.kick();
    await settle();
    expect(sink.sent).toEqual([]);
    sub.pass(2, 3);
    await settle();
    expect(sink.ids()).toEqual(["1.0", "2.0", "3.0"]);
  });

  it("MQTT's rule when asked: `a/#` takes `a`, which the M rule does not", async () => {
    const ledger = new FakeLedger();
    ledger.add(1, "a");
    ledger.add(1, "a/b");
    const m = new FakeSink();
    const mqtt = new FakeSink();
    subscription(ledger, m, ["a/#"], { height: 0, idx: AFTER_BLOCK }).kick();
    subscription(ledger, mqtt, ["a/#"], { height: 0, idx: AFTER_BLOCK }, 2, "mqtt").kick();
    await settle();
    expect(m.ids()).toEqual(["1.1"]);
    expect(mqtt.ids()).toEqual(["1.0", "1.1"]);
  });
});
