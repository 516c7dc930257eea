import type { Logger, Spelling } from "@evb/domain";
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
  blocks: { watch(groupId: string, listener: (height: number) => void): () => void };
  live: LiveRegistry;
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

  /** Registers a planned subscription (live at once: a second SUBSCRIBE with its id is 100507); it reads once kicked. */
  start(plan: SubscriptionPlan, handle: string | undefined, sink: FrameSink, remoteIp: string): LedgerSubscription {
    const { deps } = this;
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
    const unwatch = deps.blocks.watch(plan.group, (height) => sub.notify(height));
    this.subs.set(plan.id, { handle, sub, unwatch });
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
    this.deps.live.remove(id);
  }
}
