import type { BlockTopics, EventFeed, FeedEvent, FeedPosition } from "@evb/storage";

/** The ledger reads of STOMP and MQTT subscriptions: EventFeed's. */
export type SubscriptionLedger = Pick<EventFeed, "head" | "after" | "topicsIn" | "locate">;

/** Which read a subscription made: a head, a page of events, a block range's topics, a start event. */
export type FeedRead = "head" | "page" | "topics" | "locate";

/**
 * The subscriptions' ledger, each read counted (`ledger_feed_reads_total` on /metrics): how
 * much Postgres work the live subscriptions cost, so that one read per block range shows apart
 * from one per filter.
 */
export class MeteredFeed implements SubscriptionLedger {
  private readonly feed: SubscriptionLedger;
  private readonly count: (read: FeedRead) => void;

  constructor(feed: SubscriptionLedger, count: (read: FeedRead) => void) {
    this.feed = feed;
    this.count = count;
  }

  head(groupId: string): Promise<number> {
    this.count("head");
    return this.feed.head(groupId);
  }

  after(groupId: string, after: FeedPosition, upTo: number, limit: number, topics: readonly string[] | null): Promise<FeedEvent[]> {
    this.count("page");
    return this.feed.after(groupId, after, upTo, limit, topics);
  }

  topicsIn(groupId: string, from: number, to: number, after: string, limit: number): Promise<BlockTopics> {
    this.count("topics");
    return this.feed.topicsIn(groupId, from, to, after, limit);
  }

  locate(groupId: string, eventId: string, height: number): ReturnType<EventFeed["locate"]> {
    this.count("locate");
    return this.feed.locate(groupId, eventId, height);
  }
}
