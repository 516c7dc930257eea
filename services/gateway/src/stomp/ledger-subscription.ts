import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "@evb/domain";
import { AFTER_BLOCK, type FeedEvent, type FeedPosition } from "@evb/storage";
import { compileFilter, type EventFilter } from "./subscribe-request.ts";

/** The ledger reads a subscription makes (EventFeed in main.ts). */
export interface LedgerFeed {
  head(groupId: string): Promise<number>;
  after(groupId: string, after: FeedPosition, upTo: number, limit: number, topics: readonly string[] | null): Promise<FeedEvent[]>;
}

/** Where deliveries go: a session's socket (and, for MQTT, its window of unacknowledged messages). */
export interface DeliverySink {
  /** Resolves once the socket may take more (at once when it can). */
  room(): Promise<void>;
  readonly open: boolean;
}

/** A STOMP session's socket: MESSAGE frames are written to it as text. */
export interface FrameSink extends DeliverySink {
  send(text: string): void;
}

export interface LedgerSubscriptionOptions {
  /** The subscription's id, for logs. */
  id: string;
  /** Writes one event the filter takes to the sink (a STOMP MESSAGE, an MQTT PUBLISH). */
  send: (event: FeedEvent) => void;
  group: string;
  filter: EventFilter;
  /** Deliver events strictly after this position. */
  start: FeedPosition;
  feed: LedgerFeed;
  sink: DeliverySink;
  /** Events read per query (STOMP_PAGE_EVENTS). */
  pageSize: number;
  /** Told of each event sent (the listing's counters). */
  onDelivered: (at: number) => void;
  now: () => number;
  logger: Logger;
}

/** Wait after a failed ledger read before the next try (Postgres away): short, then the block hints and polls retry too. */
const RETRY_MS = 1_000;
/** Events of a page matched between two turns of the event loop: one page never holds the loop, whatever its size. */
export const EVENTS_PER_TURN = 64;

/**
 * One STOMP subscription fed from the ledger, not from memory: it reads pages of events after its
 * cursor up to the head it read first, sends the ones its filter takes, and moves its cursor over
 * every event read, taken or not. It reads the next page only when the socket has room, so a
 * slow client holds a bounded number of frames in memory and the rest stays in Postgres. Once a
 * page comes back short it is caught up to that head and sleeps until `notify` names a higher
 * block. A restart loses nothing: a client resuming after its last eventId reads the same ledger.
 * Its filter is compiled once into a trie, and a page is matched EVENTS_PER_TURN events a turn.
 * The gateway's BlockWatch tells it of each block range: `notify` when the range holds a topic
 * it takes, `pass` when it holds none, which moves a caught-up subscription on without a read.
 */
export class LedgerSubscription {
  private readonly o: LedgerSubscriptionOptions;
  private cursor: FeedPosition;
  private caughtUpTo: number;
  /** The highest sealed height it was told of (a head read already): read up to it without reading the head again. */
  private target = -1;
  /** The block watch tells it of every block from now on: no head of its own to read. */
  private watched = false;
  /** Kicked once: before that (a STOMP RECEIPT, an MQTT SUBACK not yet out) it only takes note of heights. */
  private started = false;
  private running = false;
  private wanted = false;
  private closed = false;
  private retry?: NodeJS.Timeout;
  /** Only names, no patterns: the topic filter can run in SQL. */
  private readonly sqlTopics: readonly string[] | null;
  private readonly takes: ReturnType<typeof compileFilter>;

  constructor(o: LedgerSubscriptionOptions) {
    this.o = o;
    this.cursor = o.start;
    // A start after a whole block has read that block: nothing to read until a higher one.
    this.caughtUpTo = o.start.idx === AFTER_BLOCK ? o.start.height : -1;
    this.sqlTopics = o.filter.items.every((i) => !i.includes("+") && !i.includes("#")) ? o.filter.items : null;
    this.takes = compileFilter(o.filter);
  }

  /** What it matches, for the gateway's index of live filters (BlockWatch). */
  get filter(): EventFilter {
    return this.o.filter;
  }

  /** Every event up to here was read (and sent when the filter took it): where a resumed subscription would continue. */
  get position(): FeedPosition {
    return this.cursor;
  }

  /** The block watch took it: the chain reaches `height` (-1: not known yet) and every later block will be told. */
  heard(height: number): void {
    this.watched = true;
    if (height > this.target) this.target = height;
  }

  /** Blocks up to `height` are sealed in the group and may hold its events: read on if that is past what was read. */
  notify(height: number): void {
    if (height > this.target) this.target = height;
    if (this.started && height > this.caughtUpTo) this.kick();
  }

  /**
   * Blocks (from, to] hold no topic it takes: caught up to `from` and idle, it is caught up to `to`
   * at once, without a query; otherwise (behind, or reading) it reads as for `notify`.
   */
  pass(from: number, to: number): void {
    if (this.closed || to <= this.caughtUpTo) return;
    if (this.running || this.caughtUpTo < from) {
      this.notify(to);
      return;
    }
    this.caughtUpTo = to;
    if (this.cursor.height < to) this.cursor = { height: to, idx: AFTER_BLOCK };
  }

  /** Starts (or continues) reading. */
  kick(): void {
    if (this.closed) return;
    this.started = true;
    this.wanted = true;
    if (!this.running) void this.run();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.wanted && !this.closed) {
        this.wanted = false;
        await this.catchUp();
      }
    } catch (err) {
      this.o.logger.warn({ err, subscriptionId: this.o.id }, "ledger read failed; retrying");
      this.retry = setTimeout(() => this.kick(), RETRY_MS);
    } finally {
      this.running = false;
    }
  }

  /** Reads and sends every event after the cursor up to the head as it is now. */
  private async catchUp(): Promise<void> {
    const { feed, group, pageSize, sink } = this.o;
    // Up to the highest block it was told of; without a block watch, up to the head as it is now.
    const head = this.target > this.caughtUpTo ? this.target : this.watched ? this.caughtUpTo : await feed.head(group);
    if (head <= this.caughtUpTo) return;
    for (;;) {
      await sink.room();
      if (this.closed || !sink.open) return;
      const page = await feed.after(group, this.cursor, head, pageSize, this.sqlTopics);
      for (const [i, event] of page.entries()) {
        if (i > 0 && i % EVENTS_PER_TURN === 0) await nextTurn();
        if (this.closed || !sink.open) return;
        if (this.takes(event.topic, event.extensions)) {
          await sink.room();
          if (this.closed || !sink.open) return;
          this.o.send(event);
          this.o.onDelivered(this.o.now());
        }
        this.cursor = { height: event.height, idx: event.idx };
      }
      if (page.length < pageSize) break;
    }
    // Nothing more up to `head`: every later event is in a higher block.
    if (this.cursor.height < head) this.cursor = { height: head, idx: AFTER_BLOCK };
    this.caughtUpTo = head;
  }
}
