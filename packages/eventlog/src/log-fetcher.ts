import { type ClusterMetadata, Consumer, type fetchV17, IS_CONTROL, type RecordsBatch } from "@platformatic/kafka";
import type { KafkaClient } from "./kafka-client.ts";

/** One record as read: `value` null for a tombstone; `timestampMs` when its producer sent it. */
export interface LogMessage {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  timestampMs: number;
  /** The record's headers as the client decoded them (a publish's `traceparent`); not copied. */
  headers: readonly (readonly [Buffer | null, Buffer | null])[];
}

/** A partition to read, from `offset` on. */
export interface FetchPosition {
  topic: string;
  partition: number;
  offset: number;
}

/** What one fetch brought of one partition. */
export interface FetchedPartition {
  topic: string;
  partition: number;
  /** Records at or after the offset asked for, in offset order (control records left out). */
  messages: LogMessage[];
  /** Where the next fetch of the partition starts: after the last record the fetch covered. */
  next: number;
  /** The partition's end offset as its leader answered. */
  end: number;
  /** The partition's first offset held, when the offset asked for was out of range (retention, deleted records). */
  outOfRange?: number;
}

export interface LogFetcherOptions {
  /** Suffix of the client id. */
  name: string;
  /** How long a broker may hold a fetch that found nothing new (ms); new records end it at once. */
  maxWaitMs: number;
  /** Most bytes per partition per fetch (a larger first batch still comes whole). */
  maxBytesPerPartition: number;
}

const OFFSET_OUT_OF_RANGE = 1;

/** How long past its `maxWaitMs` a fetch may take to be answered before it counts as lost (ms). */
const FETCH_ANSWER_SLACK_MS = 3_000;

type FetchResponse = fetchV17.FetchResponse;

/**
 * Reads partitions at explicit offsets, without a consumer group: one fetch request per leading
 * broker, nothing committed. The range reader, the chain tail and the indexer's group member
 * read through it. Its client retries little: the loops around it decide when to try again, and
 * a failed fetch refreshes the metadata (a leader moved, a broker died).
 */
export class LogFetcher {
  private readonly client: Consumer;
  private readonly o: LogFetcherOptions;
  private stale = false;

  constructor(kafka: KafkaClient, o: LogFetcherOptions) {
    this.o = o;
    this.client = new Consumer({
      // A fetch is answered within its wait plus the time to send what it found: a broker
      // silent for longer is gone (a pulled cable), and the loop around tries the new leader.
      ...kafka.options(o.name, Math.min(kafka.timeouts.requestMs, o.maxWaitMs + FETCH_ANSWER_SLACK_MS)),
      // A fetcher never joins: the group id only satisfies the client's constructor.
      groupId: `${kafka.clientId}-${o.name}-fetcher`,
      retries: 1,
      retryDelay: 100,
      autocommit: false,
      maxWaitTime: o.maxWaitMs,
      maxBytesPerPartition: o.maxBytesPerPartition,
    });
  }

  /** Which broker leads each partition, and the partitions without a leader now (the metadata refreshed after a failure). */
  async byLeader(positions: readonly FetchPosition[]): Promise<{ byNode: Map<number, FetchPosition[]>; leaderless: FetchPosition[] }> {
    const md = await this.metadata(positions, this.stale);
    this.stale = false;
    const byNode = new Map<number, FetchPosition[]>();
    const leaderless: FetchPosition[] = [];
    for (const p of positions) {
      const leader = md.topics.get(p.topic)?.partitions[p.partition]?.leader ?? -1;
      if (leader < 0) leaderless.push(p);
      else byNode.set(leader, [...(byNode.get(leader) ?? []), p]);
    }
    if (leaderless.length > 0) this.stale = true;
    return { byNode, leaderless };
  }

  /** The topics' metadata; the client's fetch looks up the topics it tracks. */
  private metadata(positions: readonly FetchPosition[], forceUpdate: boolean): Promise<ClusterMetadata> {
    const topics = [...new Set(positions.map((p) => p.topic))];
    for (const t of topics) if (!this.client.topics.has(t)) this.client.topics.track(t);
    return this.client.metadata({ topics, forceUpdate });
  }

  /** Every partition once: one fetch per leader, side by side; rejects when any broker's fetch failed or a partition has no leader. */
  async fetch(positions: readonly FetchPosition[]): Promise<FetchedPartition[]> {
    const { byNode, leaderless } = await this.byLeader(positions);
    if (leaderless.length > 0) {
      throw new Error(`no leader for ${leaderless.map((p) => `${p.topic} partition ${p.partition}`).join(", ")}`);
    }
    const parts = await Promise.all([...byNode].map(([node, at]) => this.fetchFrom(node, at)));
    return parts.flat();
  }

  /** One fetch from one broker. A partition whose offset is out of range comes back with `outOfRange`. */
  async fetchFrom(node: number, positions: readonly FetchPosition[]): Promise<FetchedPartition[]> {
    const md = await this.metadata(positions, false);
    const byTopic = new Map<string, FetchPosition[]>();
    for (const p of positions) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p]);
    const topics = [...byTopic].map(([topic, ps]) => ({
      topicId: md.topics.get(topic)?.id ?? "",
      partitions: ps.map((p) => ({
        partition: p.partition,
        fetchOffset: BigInt(p.offset),
        currentLeaderEpoch: -1,
        lastFetchedEpoch: -1,
        partitionMaxBytes: this.o.maxBytesPerPartition,
      })),
    }));
    const names = new Map([...byTopic.keys()].map((t) => [md.topics.get(t)?.id ?? "", t]));
    const asked = new Map(positions.map((p) => [`${p.topic}:${p.partition}`, p.offset]));
    let response: FetchResponse;
    try {
      response = await this.client.fetch({ node, topics, maxWaitTime: this.o.maxWaitMs });
    } catch (err) {
      this.stale = true;
      const partial = onlyOutOfRange(err);
      if (!partial) throw err;
      response = partial;
    }
    return read(response, names, asked);
  }

  async close(): Promise<void> {
    await this.client.close(true).catch(() => {});
  }
}

/** The response of a fetch that failed only because some offsets were out of range, else undefined. */
function onlyOutOfRange(err: unknown): FetchResponse | undefined {
  // A retried fetch fails with its attempts; the last one carries the broker's answer.
  const e = err as { response?: FetchResponse; errors?: { response?: FetchResponse }[] } | undefined;
  const response = e?.response ?? e?.errors?.at(-1)?.response;
  if (response?.errorCode !== 0) return undefined;
  const codes = response.responses.flatMap((t) => t.partitions.map((p) => p.errorCode));
  return codes.every((c) => c === 0 || c === OFFSET_OUT_OF_RANGE) ? response : undefined;
}

/** The partitions of a fetch response, each from the offset asked for. */
function read(response: FetchResponse, names: ReadonlyMap<string, string>, asked: ReadonlyMap<string, number>): FetchedPartition[] {
  const out: FetchedPartition[] = [];
  for (const t of response.responses) {
    const topic = names.get(t.topicId);
    if (topic === undefined) continue;
    for (const p of t.partitions) {
      const from = asked.get(`${topic}:${p.partitionIndex}`);
      if (from === undefined) continue; // a partition lingering in the broker's fetch session
      const end = Number(p.highWatermark);
      if (p.errorCode === OFFSET_OUT_OF_RANGE) {
        out.push({ topic, partition: p.partitionIndex, messages: [], next: from, end, outOfRange: Number(p.logStartOffset) });
        continue;
      }
      const { messages, next } = records(p.records ?? [], from);
      out.push({ topic, partition: p.partitionIndex, messages, next, end });
    }
  }
  return out;
}

/** The records of a partition's batches at or after `from`; `next` after the last batch (control batches count). */
function records(batches: readonly RecordsBatch[], from: number): { messages: LogMessage[]; next: number } {
  const messages: LogMessage[] = [];
  let next = from;
  for (const batch of batches) {
    const first = Number(batch.firstOffset);
    next = Math.max(next, first + batch.lastOffsetDelta + 1);
    if (batch.attributes & IS_CONTROL) continue;
    for (const r of batch.records) {
      const offset = first + r.offsetDelta;
      if (offset < from) continue;
      messages.push({
        offset,
        key: r.key,
        value: r.value,
        timestampMs: Number(batch.firstTimestamp + r.timestampDelta),
        headers: r.headers,
      });
    }
  }
  return { messages, next };
}
