import type { Admin } from "@platformatic/kafka";
import {
  type ChainEntry,
  chainEntryOf,
  type ChainRecord,
  chainTopicName,
  type ChainTopicView,
  decodeChainRecord,
  errorMessage,
  type Logger,
  TIMED_OUT,
} from "@evb/domain";
import { topicOffsets } from "./kafka-admin.ts";
import type { KafkaClient } from "./kafka-client.ts";
import { type FetchedPartition, LogFetcher } from "./log-fetcher.ts";
import { ReplaceableAdmin } from "./replaceable-admin.ts";

export interface ChainTailOptions {
  kafka: KafkaClient;
  topicPrefix: string;
  groups: readonly string[];
  logger: Logger;
  /** Heights remembered per group, counted down from the last (enough to judge writes near the head). */
  window?: number;
  /**
   * How old a reading of a topic's end offset may be and still count as its end now (ms): a busy
   * group's writes share one, instead of each paying a round trip before its own.
   */
  freshMs?: number;
}

/** The longest the tail waits for its admin client to close (ms). */
const KAFKA_CALL_MS = 10_000;
/**
 * How long one reading of a chain topic's end offsets may take before its admin client is
 * replaced and the reading asked again (ms): a metadata or offsets request sent over a
 * connection to a broker that went silent waits out the request timeout and its retries, which
 * held a chain-record write (and every publish answer) for its whole 5 s wait on the multi-host
 * bed although the other brokers answered. On a LAN a reading takes milliseconds.
 */
const END_OFFSET_TRY_MS = 1_500;
/** The pause before asking again after a reading failed outright (ms). */
const END_OFFSET_RETRY_MS = 100;
/** How long a fetch waits on the broker for new records (ms); records that arrive end it at once. */
const FETCH_WAIT_MS = 500;
/** Records decoded between two yields to the event loop (a start reads the whole topic). */
const YIELD_EVERY = 500;

/** One group's chain topic as read so far. */
class GroupChain implements ChainTopicView {
  lastHeight = 0;
  since = 1;
  readonly entries = new Map<number, ChainEntry>();
  /** The next offset to read. */
  position = 0;
  readonly groupId: string;
  readonly topic: string;
  private readonly window: number;

  constructor(groupId: string, topic: string, window: number) {
    this.groupId = groupId;
    this.topic = topic;
    this.window = window;
  }

  /** Takes a block record in; another record already held for its height is returned (the first one stays). */
  add(r: ChainRecord): ChainEntry | null {
    if (r.groupId !== this.groupId || r.height < this.since) return null;
    const entry = chainEntryOf(r);
    const held = this.entries.get(r.height);
    if (held) return held.content === entry.content ? null : held;
    this.entries.set(r.height, entry);
    if (r.height > this.lastHeight) this.moveHead(r.height);
    return null;
  }

  private moveHead(height: number): void {
    this.lastHeight = height;
    const since = Math.max(1, height - this.window + 1);
    if (since - this.since > this.entries.size) {
      for (const h of this.entries.keys()) if (h < since) this.entries.delete(h);
    } else {
      for (let h = this.since; h < since; h++) this.entries.delete(h);
    }
    this.since = since;
  }
}

/**
 * Follows each group's chain topic from its start, in the background, so that the indexer knows
 * what the topic holds before it writes to it (`decideChainAppend`): per group the last height
 * and the recent heights' records. Topic records and anything undecodable are skipped. `current`
 * answers only once the tail has read up to the topic's end as of a moment ago: never from a
 * view that may lack records written before that.
 */
export class ChainTail {
  private readonly o: ChainTailOptions;
  private readonly byTopic = new Map<string, GroupChain>();
  /** Replaced when a reading hangs on it (`END_OFFSET_TRY_MS`). */
  private readonly admin: ReplaceableAdmin<Admin>;
  /** Per topic, the last end offset asked for and when: callers within `freshMs` of it share it. */
  private readonly ends = new Map<string, { at: number; offsets: Promise<{ low: number; high: number }> }>();
  private readonly waiters = new Set<() => void>();
  private following?: Promise<void>;
  private closed = false;

  constructor(o: ChainTailOptions) {
    this.o = o;
    this.admin = new ReplaceableAdmin({ create: () => o.kafka.admin("chain-tail"), closeTimeoutMs: KAFKA_CALL_MS });
    for (const g of o.groups) {
      const topic = chainTopicName(o.topicPrefix, g);
      this.byTopic.set(topic, new GroupChain(g, topic, o.window ?? 10_000));
    }
  }

  /** Starts following; resolves once every topic is read to its end, or false after `timeoutMs` (it follows on). */
  async start(timeoutMs = 30_000): Promise<boolean> {
    this.following ??= this.follow();
    const views = await Promise.all(this.o.groups.map((g) => this.current(g, timeoutMs)));
    const behind = this.o.groups.filter((_, i) => views[i] === null);
    if (behind.length > 0) {
      this.o.logger.warn({ groups: behind, timeoutMs }, "the chain topics are not read to their end yet; chain records wait for it");
    }
    return behind.length === 0;
  }

  /**
   * What the group's chain topic holds, once read up to the topic's end offset as of now (a
   * reading at most `freshMs` old); null when that did not happen within `timeoutMs` (Kafka slow
   * or away): unknown, never empty.
   */
  async current(groupId: string, timeoutMs: number): Promise<ChainTopicView | null> {
    const chain = this.byTopic.get(chainTopicName(this.o.topicPrefix, groupId));
    if (!chain || this.closed) return null;
    const deadline = Date.now() + timeoutMs;
    const end = await this.endOffsetBefore(chain.topic, deadline);
    if (end === null) return null;
    const read = await this.until(() => chain.position >= end.high || end.high <= end.low, deadline - Date.now());
    return read ? chain : null;
  }

  /** The topic's end offsets, asked again (on a fresh admin client after one hung) until `deadline`; null past it. */
  private async endOffsetBefore(topic: string, deadline: number): Promise<{ low: number; high: number } | null> {
    while (!this.closed) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      const end = await this.admin.run((admin) => this.endOffset(admin, topic), Math.min(END_OFFSET_TRY_MS, left)).catch(() => null);
      if (end !== null && end !== TIMED_OUT) return end;
      // The admin client it hung on is replaced; its shared reading is dropped with it.
      if (end === TIMED_OUT) this.ends.delete(topic);
      else await new Promise((r) => setTimeout(r, Math.min(END_OFFSET_RETRY_MS, Math.max(0, deadline - Date.now()))));
    }
    return null;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.notify();
    await this.following;
    await this.admin.close();
  }

  /**
   * Fetches every chain topic from where it was read to, until closed. A failed fetch (Kafka
   * away, a leader moving) is tried again with backoff; what was read is kept.
   */
  private async follow(): Promise<void> {
    const fetcher = new LogFetcher(this.o.kafka, { name: "chain-tail", maxWaitMs: FETCH_WAIT_MS, maxBytesPerPartition: 1_048_576 });
    let delayMs = 0;
    try {
      while (!this.closed) {
        const positions = [...this.byTopic.values()].map((c) => ({ topic: c.topic, partition: 0, offset: c.position }));
        const fetched = await fetcher.fetch(positions).catch((err: unknown) => err);
        if (this.closed) return;
        if (!Array.isArray(fetched)) {
          // Capped at 1 s: every chain record waits for this tail, and a failed fetch already
          // cost its timeout; a leader that moved is found by the next try.
          delayMs = Math.min(Math.max(250, delayMs * 2), 1_000);
          this.o.logger.warn({ err: errorMessage(fetched), retryInMs: delayMs }, "the chain topic tail could not read; trying again");
          await this.until(() => this.closed, delayMs);
          continue;
        }
        delayMs = 0;
        for (const f of fetched as FetchedPartition[]) await this.read(f);
      }
    } finally {
      await fetcher.close();
    }
  }

  /** Takes a fetched partition in, yielding to the event loop now and then. */
  private async read(f: FetchedPartition): Promise<void> {
    const chain = this.byTopic.get(f.topic);
    if (!chain) return;
    if (f.outOfRange !== undefined) {
      // Records before the topic's start are gone (deleted by an operator): read from its start.
      chain.position = Math.max(chain.position, f.outOfRange);
      return;
    }
    let n = 0;
    for (const m of f.messages) {
      if (m.value && !m.key?.toString("utf8").startsWith("topic:")) {
        const r = decodeChainRecord(m.value);
        const other = r && chain.add(r);
        if (r && other) {
          this.o.logger.error(
            { groupId: chain.groupId, height: r.height, first: other.hash, second: r.hash, offset: m.offset },
            `group ${chain.groupId}: the chain topic holds two different records for height ${r.height}`,
          );
        }
      }
      chain.position = m.offset + 1;
      if (++n % YIELD_EVERY === 0) {
        this.notify();
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    chain.position = Math.max(chain.position, f.next);
    this.notify();
  }

  private endOffset(admin: Admin, topic: string): Promise<{ low: number; high: number }> {
    const now = Date.now();
    const last = this.ends.get(topic);
    if (last && now - last.at <= (this.o.freshMs ?? 100)) return last.offsets;
    const offsets = topicOffsets(admin, topic).then(([p]) => ({ low: p?.low ?? 0, high: p?.high ?? 0 }));
    // A failed reading is not shared: the next caller asks again.
    offsets.catch(() => {
      if (this.ends.get(topic)?.offsets === offsets) this.ends.delete(topic);
    });
    this.ends.set(topic, { at: now, offsets });
    return offsets;
  }

  /** Waits until `ok()` (checked whenever the tail read on, or closes) or `ms` passed; says whether `ok()`. */
  private until(ok: () => boolean, ms: number): Promise<boolean> {
    if (ok() || this.closed) return Promise.resolve(ok());
    return new Promise((resolve) => {
      const check = () => {
        if (ok() || this.closed) done();
      };
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(ok());
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiters.add(check);
    });
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
