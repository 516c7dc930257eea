import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { AFTER_BLOCK, type FeedEvent, type FeedPosition } from "@evb/storage";
import type { LedgerFeed } from "../stomp/ledger-subscription.ts";
import { DeliveryWindow } from "./delivery-window.ts";
import { MqttSubscription } from "./mqtt-subscription.ts";

/** A ledger in memory: one event per block, heights 1..n. */
class FakeLedger implements LedgerFeed {
  readonly events: FeedEvent[] = [];
  add(topic: string): void {
    const height = this.events.length + 1;
    const e = `e${height}`;
    this.events.push({
      height,
      idx: 0,
      eventId: e,
      topic,
      content: Buffer.from(e),
      extensions: {},
      sender: "",
      txHash: "",
      timestampMs: 0,
    });
  }
  async head(): Promise<number> {
    return this.events.length;
  }
  async after(_g: string, after: FeedPosition, upTo: number, limit: number): Promise<FeedEvent[]> {
    const later = (e: FeedEvent) => e.height > after.height || (e.height === after.height && e.idx > after.idx);
    return this.events.filter((e) => later(e) && e.height <= upTo).slice(0, limit);
  }
}

const settle = async () => {
  for (let i = 0; i < 30; i++) await new Promise((r) => setImmediate(r));
};

function subscription(ledger: FakeLedger, qos: 0 | 1, window: DeliveryWindow, maxPacket?: number) {
  const sent: { id: string; packetId: number | undefined }[] = [];
  const sub = new MqttSubscription({
    id: "s",
    filter: "a/#",
    qos,
    group: "1",
    start: { height: 0, idx: AFTER_BLOCK },
    feed: ledger,
    out: { send: (b) => sent.push(JSON.parse(b.toString())), room: async () => {}, open: true },
    window,
    encode: (event, _qos, packetId) => Buffer.from(JSON.stringify({ id: event.eventId, packetId, pad: "x".repeat(event.height * 10) })),
    maxPacket,
    pageSize: 2,
    onDelivered: () => {},
    now: () => 0,
    logger: silentLogger,
  });
  return { sub, sent };
}

describe("MqttSubscription", () => {
  it("reads on only as its QoS 1 deliveries are acknowledged: at most the window is unacknowledged", async () => {
    const ledger = new FakeLedger();
    for (let i = 0; i < 10; i++) ledger.add("a/b");
    const window = new DeliveryWindow(3);
    const { sub, sent } = subscription(ledger, 1, window);
    sub.kick();
    await settle();
    expect(sent.map((s) => s.id)).toEqual(["e1", "e2", "e3"]);
    window.ack(sent[0]?.packetId as number);
    await settle();
    expect(sent.map((s) => s.id)).toEqual(["e1", "e2", "e3", "e4"]);
  });

  it("its position is just before the oldest unacknowledged delivery, so a resumed session gets it again", async () => {
    const ledger = new FakeLedger();
    for (let i = 0; i < 4; i++) ledger.add(i === 1 ? "b" : "a/x");
    const window = new DeliveryWindow(10);
    const { sub, sent } = subscription(ledger, 1, window);
    sub.kick();
    await settle();
    expect(sent.map((s) => s.id)).toEqual(["e1", "e3", "e4"]);
    expect(sub.position).toEqual({ height: 1, idx: -1 });
    window.ack(sent[0]?.packetId as number);
    expect(sub.position).toEqual({ height: 3, idx: -1 });
    window.ack(sent[2]?.packetId as number);
    expect(sub.position).toEqual({ height: 3, idx: -1 });
    window.ack(sent[1]?.packetId as number);
    expect(sub.position).toEqual({ height: 4, idx: 0 });
  });

  it("QoS 0 needs no acknowledgement; a packet larger than the client takes is skipped", async () => {
    const ledger = new FakeLedger();
    for (let i = 0; i < 12; i++) ledger.add("a");
    const { sub, sent } = subscription(ledger, 0, new DeliveryWindow(1), 110);
    sub.kick();
    await settle();
    // The fake's packets grow 10 bytes a block: from e10 on they are above 110.
    expect(sent.map((s) => s.id)).toEqual(["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"]);
    expect(sent.every((s) => s.packetId === undefined)).toBe(true);
    expect(sub.position).toEqual({ height: 12, idx: 0 });
  });
});
