import type { Logger } from "@evb/domain";
import type { FeedEvent, FeedPosition } from "@evb/storage";
import { type DeliverySink, type LedgerFeed, LedgerSubscription } from "../stomp/ledger-subscription.ts";
import type { DeliveryWindow } from "./delivery-window.ts";

/** Where a subscription's PUBLISH packets go: the connection's socket writer. */
export interface PacketSink extends DeliverySink {
  send(packet: Buffer): void;
}

export interface MqttSubscriptionOptions {
  id: string;
  filter: string;
  qos: 0 | 1;
  group: string;
  /** Deliver events strictly after this position. */
  start: FeedPosition;
  feed: LedgerFeed;
  out: PacketSink;
  window: DeliveryWindow;
  /** An event as a PUBLISH at a QoS (with its packet id at QoS 1), encoded for the connection's protocol level. */
  encode: (event: FeedEvent, qos: 0 | 1, packetId: number | undefined) => Buffer;
  /** The client's Maximum Packet Size: a larger PUBLISH is not sent (MQTT 5 3.1.2.26); undefined: none. */
  maxPacket: number | undefined;
  pageSize: number;
  onDelivered: (at: number) => void;
  now: () => number;
  logger: Logger;
}

/**
 * One MQTT topic filter of a session, fed from the ledger by a LedgerSubscription (the reader
 * STOMP uses): events in ledger order, read only as the socket drains and, at QoS 1, as the
 * connection's window of unacknowledged deliveries has room. Its `position` is where a resumed
 * session continues: just before the oldest delivery not yet acknowledged (so it comes again,
 * at least once), else everything read. At QoS 0 that is everything written to the socket.
 */
export class MqttSubscription {
  private readonly o: MqttSubscriptionOptions;
  private readonly reader: LedgerSubscription;
  /** Unacknowledged deliveries in delivery order: sequence number → the position just before the event. */
  private readonly unacked = new Map<number, FeedPosition>();
  private sequence = 0;
  private granted: 0 | 1;

  constructor(o: MqttSubscriptionOptions) {
    this.o = o;
    this.granted = o.qos;
    const out = o.out;
    this.reader = new LedgerSubscription({
      id: o.id,
      send: (event) => this.deliver(event),
      group: o.group,
      filter: { items: [o.filter], tag: null, rule: "mqtt" },
      start: o.start,
      feed: o.feed,
      sink: {
        room: () => this.room(),
        get open() {
          return out.open;
        },
      },
      pageSize: o.pageSize,
      onDelivered: o.onDelivered,
      now: o.now,
      logger: o.logger,
    });
  }

  get id(): string {
    return this.o.id;
  }

  /** Its ledger reader, as the block watch tells it of blocks. */
  get feed(): LedgerSubscription {
    return this.reader;
  }

  get group(): string {
    return this.o.group;
  }

  get qos(): 0 | 1 {
    return this.granted;
  }

  /** A SUBSCRIBE of the same filter again: the new QoS applies from the next delivery; the flow is not interrupted. */
  set qos(qos: 0 | 1) {
    this.granted = qos;
  }

  get position(): FeedPosition {
    for (const before of this.unacked.values()) return before;
    return this.reader.position;
  }

  kick(): void {
    this.reader.kick();
  }

  notify(height: number): void {
    this.reader.notify(height);
  }

  close(): void {
    this.reader.close();
  }

  private async room(): Promise<void> {
    await this.o.out.room();
    if (this.granted === 1) await this.o.window.room();
  }

  private deliver(event: FeedEvent): void {
    const { o } = this;
    const qos = this.granted;
    // Too large for the client: skipped as an event the filter does not take would be.
    if (o.maxPacket !== undefined && o.encode(event, qos, qos === 1 ? 1 : undefined).length > o.maxPacket) return;
    if (qos === 0) {
      o.out.send(o.encode(event, 0, undefined));
      return;
    }
    const n = ++this.sequence;
    this.unacked.set(n, { height: event.height, idx: event.idx - 1 });
    o.window.send(
      (packetId) => o.out.send(o.encode(event, 1, packetId)),
      () => this.unacked.delete(n),
    );
  }
}
