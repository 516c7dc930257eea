import type { Logger, Spelling } from "@evb/domain";
import type { CallerQuota } from "./caller-quota.ts";
import type { WatchedFeed } from "./feed-index.ts";
import { type FrameSink, type LedgerFeed, LedgerSubscription } from "./ledger-subscription.ts";
import type { LiveRecord } from "./live-subscriptions.ts";
import { messageFrame } from "./stomp-replies.ts";
import type { SubscriptionPlan } from "./stomp-subscribe.ts";
import { listedTopicName } from "./subscribe-request.ts";

/** The live-subscription registry a session reports to (LiveSubscriptions). */
export interface LiveRegistry {
  has(id: string): boolean;
  add(record: LiveRecord): void;
  delivered(id: string, at: number): void;
  remove(id: string): void;
}

export interface SessionSubscriptionsDeps {
  ledger: LedgerFeed;
  blocks: { watch(groupId: string, feed: WatchedFeed): () => void };
  live: LiveRegistry;
  /** What each caller holds over all its connections (MAX_SUBSCRIPTIONS_PER_CALLER, MAX_TOPIC_FILTERS_PER_CALLER). */
  quota: CallerQuota;
  /** This node instance (ip:port), as listSubscription names it. */
  node: () => string;
  pageEvents: number;
  /** How a MESSAGE spells extension headers and `event-plus` (BRAND). */
  spelling: Spelling;
  now: () => number;
  logger: Logger;
}

interface Running {
  handle: string | undefined;
  sub: LedgerSubscription;
  unwatch: () => void;
  /** The caller whose quota it takes, and how much. */
  caller: string;
  filters: number;
}

/**
 * The subscriptions of one connection: each reads the ledger into the connection's socket, is
 * woken by its group's blocks and is listed while it runs. A SUBSCRIBE `id` reused in a session
 * keeps both subscriptions (as the original); UNSUBSCRIBE of that id ends the newer one.
 */
export class SessionSubscriptions {
  private readonly deps: SessionSubscriptionsDeps;
  private readonly subs = new Map<string, Running>();

  constructor(deps: SessionSubscriptionsDeps) {
    this.deps = deps;
  }

  /**
   * Registers a planned subscription (live at once: a second SUBSCRIBE with its id is 100507); it
   * reads once kicked. null, nothing started, when the caller's quota has no room for it (100510).
   */
  start(plan: SubscriptionPlan, handle: string | undefined, sink: FrameSink, remoteIp: string, caller: string): LedgerSubscription | null {
    const { deps } = this;
    const filters = new Set(plan.filter.items).size;
    if (!deps.quota.take(caller, filters)) return null;
    const delivery = { handle: handle ?? "", subscriptionId: plan.id };
    const sub = new LedgerSubscription({
      id: plan.id,
      send: (event) => sink.send(messageFrame(delivery, event, deps.spelling)),
      group: plan.group,
      filter: plan.filter,
      start: plan.start,
      feed: deps.ledger,
      sink,
      pageSize: deps.pageEvents,
      onDelivered: (at) => deps.live.delivered(plan.id, at),
      now: deps.now,
      logger: deps.logger,
    });
    const unwatch = deps.blocks.watch(plan.group, sub);
    this.subs.set(plan.id, { handle, sub, unwatch, caller, filters });
    deps.live.add({
      id: plan.id,
      node: deps.node(),
      groupId: plan.group,
      topicName: listedTopicName(plan.filter.items),
      remoteIp,
      createdAt: deps.now(),
      delivered: 0,
      notifiedAt: null,
    });
    return sub;
  }

  /** Ends the newest subscription under a SUBSCRIBE `id`; false when there is none. */
  endByHandle(handle: string | undefined): boolean {
    if (handle === undefined) return false;
    const id = [...this.subs.entries()].reverse().find(([, r]) => r.handle === handle)?.[0];
    if (id === undefined) return false;
    this.end(id);
    return true;
  }

  get size(): number {
    return this.subs.size;
  }

  endAll(): void {
    for (const id of [...this.subs.keys()]) this.end(id);
  }

  private end(id: string): void {
    const r = this.subs.get(id);
    if (!r) return;
    this.subs.delete(id);
    r.sub.close();
    r.unwatch();
    this.deps.quota.give(r.caller, r.filters);
    this.deps.live.remove(id);
  }
}
