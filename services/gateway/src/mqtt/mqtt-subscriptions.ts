import { randomUUID } from "node:crypto";
import type { Logger } from "@evb/domain";
import type { FeedEvent, FeedPosition } from "@evb/storage";
import type { CallerQuota } from "../stomp/caller-quota.ts";
import type { WatchedFeed } from "../stomp/feed-index.ts";
import type { LedgerFeed } from "../stomp/ledger-subscription.ts";
import type { LiveRegistry } from "../stomp/session-subscriptions.ts";
import type { DeliveryWindow } from "./delivery-window.ts";
import { MqttSubscription, type PacketSink } from "./mqtt-subscription.ts";
import type { StoredSubscription } from "./session-store.ts";

export interface MqttSubscriptionsDeps {
  ledger: LedgerFeed;
  blocks: { watch(groupId: string, feed: WatchedFeed): () => void };
  live: LiveRegistry;
  /** What each caller holds over all its connections, STOMP's included (one per gateway). */
  quota: CallerQuota;
  /** This node instance (ip:port), as listSubscription names it. */
  node: () => string;
  pageEvents: number;
  now: () => number;
  logger: Logger;
}

/** What the subscriptions of one connection share: its socket, its window, its encoding. */
export interface Connection {
  out: PacketSink;
  window: DeliveryWindow;
  encode: (event: FeedEvent, qos: 0 | 1, packetId: number | undefined) => Buffer;
  maxPacket: number | undefined;
  remoteIp: string;
  /** Whose quota its filters take (subscriberOf: the API key, else the address). */
  caller: string;
}

interface Running {
  sub: MqttSubscription;
  unwatch: () => void;
}

/**
 * The subscriptions of one MQTT session, one per topic filter (protocols.md 3.5): each reads the
 * ledger into the connection, is woken by its group's blocks and is listed by listSubscription
 * (`interfaceType` `mqtt`) while it runs. The same filter again replaces its QoS and keeps its
 * place (MQTT-3.8.4-3). Each filter takes one subscription and one filter of the caller's quota.
 */
export class MqttSubscriptions {
  private readonly deps: MqttSubscriptionsDeps;
  private readonly conn: Connection;
  private readonly byFilter = new Map<string, Running>();

  constructor(deps: MqttSubscriptionsDeps, conn: Connection) {
    this.deps = deps;
    this.conn = conn;
  }

  get size(): number {
    return this.byFilter.size;
  }

  has(filter: string): boolean {
    return this.byFilter.has(filter);
  }

  /**
   * Starts a filter after `start` (or, when it runs already, sets its QoS); it reads once kicked.
   * null, nothing started, when the caller's quota is full (a resumed session's filter is then
   * dropped, with a warning).
   */
  add(filter: string, qos: 0 | 1, group: string, start: FeedPosition): MqttSubscription | null {
    const running = this.byFilter.get(filter);
    if (running) {
      running.sub.qos = qos;
      return running.sub;
    }
    const { deps, conn } = this;
    if (!deps.quota.take(conn.caller, 1)) {
      deps.logger.warn(
        { caller: conn.caller, filter },
        "MQTT filter refused: the caller holds MAX_SUBSCRIPTIONS_PER_CALLER or MAX_TOPIC_FILTERS_PER_CALLER",
      );
      return null;
    }
    const id = randomUUID();
    const sub = new MqttSubscription({
      id,
      filter,
      qos,
      group,
      start,
      feed: deps.ledger,
      out: conn.out,
      window: conn.window,
      encode: conn.encode,
      maxPacket: conn.maxPacket,
      pageSize: deps.pageEvents,
      onDelivered: (at) => deps.live.delivered(id, at),
      now: deps.now,
      logger: deps.logger,
    });
    const unwatch = deps.blocks.watch(group, sub.feed);
    this.byFilter.set(filter, { sub, unwatch });
    deps.live.add({
      id,
      interfaceType: "mqtt",
      node: deps.node(),
      groupId: group,
      topicName: filter,
      remoteIp: conn.remoteIp,
      createdAt: deps.now(),
      delivered: 0,
      notifiedAt: null,
    });
    return sub;
  }

  /** Ends a filter's subscription; false when the session has none. */
  remove(filter: string): boolean {
    const r = this.byFilter.get(filter);
    if (!r) return false;
    this.byFilter.delete(filter);
    r.sub.close();
    r.unwatch();
    this.deps.quota.give(this.conn.caller, 1);
    this.deps.live.remove(r.sub.id);
    return true;
  }

  all(): MqttSubscription[] {
    return [...this.byFilter.values()].map((r) => r.sub);
  }

  /** Every filter with its QoS, group and the position a resumed session continues from. */
  snapshot(): StoredSubscription[] {
    return [...this.byFilter.entries()].map(([filter, { sub }]) => ({ filter, qos: sub.qos, group: sub.group, position: sub.position }));
  }

  endAll(): void {
    for (const filter of [...this.byFilter.keys()]) this.remove(filter);
  }
}
