import { setImmediate as nextTurn } from "node:timers/promises";
import { BlockNudge, errorMessage, type Logger, parseHint } from "@evb/domain";
import type { BlockTopics } from "@evb/storage";
import type { MessageSubscriber } from "../events/receipt-waiter.ts";
import { FeedIndex, type WatchedFeed } from "./feed-index.ts";

export interface BlockWatchOptions {
  /** The gateway's pub/sub connection (the receipt waiter's; one connection serves many channels). */
  subscriber: MessageSubscriber;
  /** The indexers' "new block" channel (redisKeys().blocksChannel). */
  channel: string;
  /** A group's current height: the slow poll that stands in for lost hints. */
  head: (groupId: string) => Promise<number>;
  /** The distinct topics of blocks (from, to] clamped to the head, paged by topic (EventFeed.topicsIn). */
  topics: (groupId: string, from: number, to: number, after: string, limit: number) => Promise<BlockTopics>;
  /** Milliseconds between polls of the heads of watched groups (STOMP_POLL_MS). */
  pollMs: number;
  logger: Logger;
}

/** Topics read per query of a block range. */
export const TOPICS_PER_READ = 1_000;
/** Feeds told of a range per turn of the event loop. */
const FEEDS_PER_TURN = 2_000;

/**
 * Tells the STOMP and MQTT subscriptions (feeds) of this gateway that a group's chain grew. The
 * indexers' nudge on the blocks channel (the notifiers listen to the same) wakes it at once; a
 * nudge is a hint and may be lost (a Redis blip), so every `pollMs` the heads of the groups
 * someone watches are read (one query per group, not per subscription) and passed on too.
 *
 * Which topics a new range of blocks holds is read once per group for all feeds (one query per
 * range and thousand topics), and matched in memory against the live filters (FeedIndex): only
 * the feeds it concerns read the ledger; the others are told the range holds nothing for them
 * and move on without a query. Ranges are read one at a time per group; hints that come
 * meanwhile are gathered into the next range.
 */
export class BlockWatch {
  private readonly o: BlockWatchOptions;
  private readonly groups = new Map<string, GroupFeeds>();
  private timer?: NodeJS.Timeout;
  private started?: Promise<unknown>;
  private polling = false;

  constructor(o: BlockWatchOptions) {
    this.o = o;
  }

  start(): Promise<unknown> {
    this.started ??= (async () => {
      this.o.subscriber.on("message", (channel: string, message: string) => {
        if (channel !== this.o.channel) return;
        const nudge = parseHint(BlockNudge, message);
        if (nudge) this.tell(nudge.groupId, nudge.height);
      });
      await this.o.subscriber.subscribe(this.o.channel);
      this.timer = setInterval(() => void this.poll(), this.o.pollMs);
      this.timer.unref();
    })();
    return this.started;
  }

  /** Tells `feed` of the group's blocks (notify or pass) until the returned function is called. */
  watch(groupId: string, feed: WatchedFeed): () => void {
    let group = this.groups.get(groupId);
    if (!group) {
      group = new GroupFeeds(groupId, this.o);
      this.groups.set(groupId, group);
      // Where the group's ranges start: the head now (a failure is the next poll's to retry).
      const primed = group;
      this.o.head(groupId).then(
        (height) => primed.tell(height),
        () => {},
      );
    }
    const g = group;
    g.add(feed);
    return () => {
      g.remove(feed);
      if (g.empty && this.groups.get(groupId) === g) this.groups.delete(groupId);
    };
  }

  private tell(groupId: string, height: number): void {
    this.groups.get(groupId)?.tell(height);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const groupId of [...this.groups.keys()]) this.tell(groupId, await this.o.head(groupId));
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err) }, "could not read the chain heads for STOMP subscribers; next poll retries");
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.started) await this.o.subscriber.unsubscribe(this.o.channel).catch(() => {});
  }
}

/** The feeds of one group and how far their blocks were told. */
class GroupFeeds {
  private readonly groupId: string;
  private readonly o: BlockWatchOptions;
  /** Each feed, with the round it was added in: one added during a range's read reads for itself. */
  private readonly feeds = new Map<WatchedFeed, number>();
  private readonly index = new FeedIndex();
  /** Every block up to here was told to the feeds; undefined before the first. */
  private known: number | undefined;
  /** The highest height heard of. */
  private target = -1;
  private running = false;
  private round = 0;

  constructor(groupId: string, o: BlockWatchOptions) {
    this.groupId = groupId;
    this.o = o;
  }

  get empty(): boolean {
    return this.feeds.size === 0;
  }

  add(feed: WatchedFeed): void {
    this.feeds.set(feed, this.round);
    this.index.add(feed);
    feed.heard(this.target);
  }

  remove(feed: WatchedFeed): void {
    if (this.feeds.delete(feed)) this.index.remove(feed);
  }

  tell(height: number): void {
    if (height > this.target) this.target = height;
    if (!this.running) void this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.feeds.size > 0 && this.target > (this.known ?? -1)) await this.step(this.target);
    } catch (err) {
      this.o.logger.warn(
        { err: errorMessage(err), groupId: this.groupId },
        "could not read the topics of new blocks for STOMP and MQTT subscribers; the next block or poll retries",
      );
    } finally {
      this.running = false;
    }
  }

  /** Tells every feed of the blocks after `known` up to `want` (clamped to the head). */
  private async step(want: number): Promise<void> {
    const from = this.known;
    if (from === undefined) {
      // The first height (the head read when the group's first feed came, or a hint before it):
      // no range to read, so each feed reads for itself if it is behind.
      this.known = want;
      for (const feed of [...this.feeds.keys()]) feed.notify(want);
      return;
    }
    const round = ++this.round;
    const concerned = new Set<WatchedFeed>();
    let to = want;
    let after = "";
    for (let first = true; ; first = false) {
      const page = await this.o.topics(this.groupId, from, to, after, TOPICS_PER_READ);
      if (first) to = Math.min(want, page.head);
      this.index.collect(page.topics, round, concerned);
      if (page.topics.length < TOPICS_PER_READ) break;
      after = page.topics.at(-1) as string;
    }
    // A height not (or no longer) in the ledger: nothing above `to` until a hint or poll says so.
    if (this.target === want && to < want) this.target = Math.max(to, from);
    if (to <= from) return;
    this.known = to;
    // A bounded number of feeds told per turn, whatever their number. One added meanwhile heard
    // the height as it was watched, and reads up to it by itself.
    let told = 0;
    for (const [feed, added] of [...this.feeds]) {
      if (++told % FEEDS_PER_TURN === 0) await nextTurn();
      if (added >= round || concerned.has(feed)) feed.notify(to);
      else feed.pass(from, to);
    }
  }
}
