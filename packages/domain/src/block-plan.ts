import { blockHash, topicAddress, transactionHash } from "./chain.ts";
import { formatEventId } from "./event-id.ts";
import { KeyBook, type KeyedAnswer, type KeptKey, type NewKey, publishContentHash } from "./idempotency.ts";
import type { LogRecord } from "./log-record.ts";

/** One fetched Kafka record; `record` is null when its value could not be decoded. */
export interface PositionedRecord {
  partition: number;
  offset: number;
  record: LogRecord | null;
  /** The W3C traceparent the event continues (tracing on only); stored with the event, never hashed. */
  traceparent?: string | undefined;
}

export interface SealedEvent {
  record: LogRecord;
  eventId: string;
  seq: number;
  idx: number;
  txHash: string;
  toAddress: string;
  partition: number;
  offset: number;
  traceparent?: string | undefined;
}

/** The log records a block covers in one partition: offsets `from` to `to`, both included. */
export interface LogRange {
  partition: number;
  from: number;
  to: number;
}

export interface SealedBlock {
  groupId: string;
  height: number;
  hash: string;
  prevHash: string;
  timestampMs: number;
  /** "0x<n>", as hashed. */
  sealer: string;
  sealerIndex: number;
  events: SealedEvent[];
  /** Every record the block consumed, undecodable ones included: what a replay must fetch again. */
  ranges: LogRange[];
}

/** Records between `expected` and `got` are not in the batch: the batch starts past the ledger. */
export interface OffsetGap {
  groupId: string;
  partition: number;
  expected: number;
  got: number;
}

/** What the ledger holds, read under the chain-head lock. */
export interface LedgerHead {
  height: number;
  hash: string;
  /** Next offset to index per partition of the current log epoch; a partition absent has none yet. */
  nextOffsets: ReadonlyMap<number, number>;
  /** Sequence number so far and contract address of each known topic of the batch. */
  topics: ReadonlyMap<string, { seq: number; address: string }>;
  /** The batch's idempotency keys the ledger holds (expired ones may be among them); absent when no record has one. */
  keys?: ReadonlyMap<string, KeptKey>;
}

export interface PlanOptions {
  groupId: string;
  /** The block's seal time (epoch ms): the indexer's clock, or a chain record's on replay. */
  timestampMs: number;
  sealerIndex: number;
}

export interface BlockPlan {
  /**
   * null when nothing in the batch makes a block (all indexed already, or undecodable). A block
   * may hold no event: one that only answered keyed records (duplicates, conflicts).
   */
  block: SealedBlock | null;
  /** New next offsets per partition; written even when `block` is null. */
  advance: Map<number, number>;
  /** Topics the block's events create (unknown to the ledger until now). */
  newTopics: { name: string; address: string; creator: string }[];
  /** The sequence number each topic with an event in the block reaches. */
  topicSeqs: Map<string, number>;
  /** Partitions whose records start past the ledger's next offset: left out of the block. */
  gaps: OffsetGap[];
  /** Records for the next block, in order. */
  rest: PositionedRecord[];
  /** Keyed records the block consumed without an event: a duplicate or a conflict of an earlier one. */
  answers: KeyedAnswer[];
  /** Idempotency keys the block's events take (written with the block). */
  keys: NewKey[];
  /**
   * Set when the block consumed a keyed record: keys expired at the block's seal time are
   * deleted with it. Only such blocks prune, so the keyless path never touches the table, and
   * what a key-reading block finds is a function of the blocks below it, as a replay needs.
   */
  pruneKeysAt: number | null;
}

/** Orders records the way every plan reads them: by partition, then offset. */
export function sortRecords(records: readonly PositionedRecord[]): PositionedRecord[] {
  return [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

/** The records a plan may take, and partitions that start past the ledger's next offset (gaps). */
function freshRecords(head: LedgerHead, sorted: readonly PositionedRecord[], groupId: string) {
  const gaps: OffsetGap[] = [];
  const gapped = new Set<number>();
  const seen = new Map<number, number>();
  const fresh: PositionedRecord[] = [];
  for (const r of sorted) {
    if (gapped.has(r.partition)) continue;
    const from = seen.get(r.partition) ?? head.nextOffsets.get(r.partition) ?? r.offset;
    if (r.offset < from) continue;
    if (r.offset > from) {
      gaps.push({ groupId, partition: r.partition, expected: from, got: r.offset });
      gapped.add(r.partition);
      continue;
    }
    seen.set(r.partition, r.offset + 1);
    fresh.push(r);
  }
  return { fresh, gaps };
}

/** A keyed record the ledger or this plan has seen before: answered, not sealed again; null when it makes an event. */
function keyedAnswer(keys: KeyBook, record: LogRecord, key: string, contentHash: string): KeyedAnswer | null {
  const d = keys.decide(key, contentHash);
  if (d.kind === "new") return null;
  return { requestId: record.requestId, gatewayId: record.gatewayId, outcome: d.kind, eventId: d.eventId };
}

/**
 * Every decision of one seal, with no I/O: given the ledger's head and positions and the
 * fetched records (sorted by partition, offset), which records the next block takes, the
 * events' sequence numbers, eventIds and transaction hashes, and the block hash.
 *
 * - A record below the partition's next offset is indexed already (redelivery): skipped.
 * - A partition whose first new record is past its next offset has a gap: its records are
 *   left out (the caller seeks back, or refuses when the log no longer holds the gap).
 * - An undecodable record is consumed (offsets advance) but makes no event.
 * - A record whose idempotency key the ledger (or an earlier record of the plan) holds, within
 *   its window, is consumed without an event: answered with the original eventId for the same
 *   content, as a conflict for another (`answers`); sequence numbers do not move. Such records
 *   still make a block (an empty one when nothing else does), whose chain record covers them.
 * - The block ends early where two of its events would get the same eventId (topics whose
 *   SHA-256 prefixes share 8 hex digits reaching the same sequence number): the second event
 *   opens the next block, where the height differs.
 *
 * The same head, records and options always give the same plan: that is what lets a replay
 * from the log rebuild identical blocks.
 */
export function planBlock(head: LedgerHead, sorted: readonly PositionedRecord[], opts: PlanOptions): BlockPlan {
  const { fresh, gaps } = freshRecords(head, sorted, opts.groupId);
  const height = head.height + 1;
  const seqs = new Map<string, number>();
  const newTopics: BlockPlan["newTopics"] = [];
  const events: SealedEvent[] = [];
  const ids = new Set<string>();
  const advance = new Map<number, number>();
  const ranges = new Map<number, LogRange>();
  const keys = new KeyBook(head.keys, opts.timestampMs);
  const answers: KeyedAnswer[] = [];
  let keyed = false;
  let cut = fresh.length;
  for (let i = 0; i < fresh.length; i++) {
    const r = fresh[i] as PositionedRecord;
    const idem = r.record?.idempotency;
    const contentHash = idem && r.record ? publishContentHash(r.record) : "";
    const answer = idem && r.record ? keyedAnswer(keys, r.record, idem.key, contentHash) : null;
    if (answer) answers.push(answer);
    else if (r.record) {
      const topic = r.record.topic;
      let known = head.topics.get(topic);
      if (!known && !newTopics.some((t) => t.name === topic)) {
        // A topic unknown to the ledger (opened in another schema, or a hand-made record) is
        // created by its first event rather than dropped: Kafka acknowledged the publish.
        newTopics.push({ name: topic, address: topicAddress(opts.groupId, topic), creator: r.record.sender });
      }
      known ??= { seq: 0, address: topicAddress(opts.groupId, topic) };
      const seq = (seqs.get(topic) ?? known.seq) + 1;
      const eventId = formatEventId(topic, seq, height);
      if (ids.has(eventId)) {
        cut = i;
        break;
      }
      ids.add(eventId);
      seqs.set(topic, seq);
      events.push(sealedEvent(r, r.record, { eventId, seq, idx: events.length, toAddress: known.address, timestampMs: opts.timestampMs }));
      if (idem) keys.take(idem.key, contentHash, eventId, idem.retentionMs);
    }
    if (idem) keyed = true;
    advance.set(r.partition, r.offset + 1);
    const range = ranges.get(r.partition);
    if (range) range.to = r.offset;
    else ranges.set(r.partition, { partition: r.partition, from: r.offset, to: r.offset });
  }
  const rest = fresh.slice(cut);
  // A topic whose first record was cut is created by the next block, not this one.
  const created = newTopics.filter((t) => seqs.has(t.name));
  const taken = [...keys.taken.values()];
  // Keyed answers make a block even without events, so that every consumed keyed record is in a
  // chain record's range: a rebuild decides it again, and no Kafka offset is past the chain.
  if (events.length === 0 && answers.length === 0)
    return { block: null, advance, newTopics: [], topicSeqs: seqs, gaps, rest, answers, keys: [], pruneKeysAt: null };
  const block = sealedBlock(head, opts, height, events, [...ranges.values()]);
  const pruneKeysAt = keyed ? opts.timestampMs : null;
  return { block, advance, newTopics: created, topicSeqs: seqs, gaps, rest, answers, keys: taken, pruneKeysAt };
}

/** One event of a block, its transaction hash over the event and the seal time. */
function sealedEvent(
  r: PositionedRecord,
  record: LogRecord,
  e: { eventId: string; seq: number; idx: number; toAddress: string; timestampMs: number },
): SealedEvent {
  const txHash = transactionHash({
    eventId: e.eventId,
    topic: record.topic,
    contentBase64: Buffer.from(record.content, "utf8").toString("base64"),
    extensions: record.extensions,
    sender: record.sender,
    timestampMs: e.timestampMs,
  });
  return {
    record,
    eventId: e.eventId,
    seq: e.seq,
    idx: e.idx,
    txHash,
    toAddress: e.toAddress,
    partition: r.partition,
    offset: r.offset,
    traceparent: r.traceparent,
  };
}

/** The block over its events: the hash chains the head's hash, height, seal time, sealer and the transaction hashes. */
function sealedBlock(head: LedgerHead, opts: PlanOptions, height: number, events: SealedEvent[], ranges: LogRange[]): SealedBlock {
  const sealer = `0x${opts.sealerIndex.toString(16)}`;
  const hash = blockHash({
    groupId: opts.groupId,
    height,
    prevHash: head.hash,
    timestampMs: opts.timestampMs,
    sealer,
    txHashes: events.map((e) => e.txHash),
  });
  return {
    groupId: opts.groupId,
    height,
    hash,
    prevHash: head.hash,
    timestampMs: opts.timestampMs,
    sealer,
    sealerIndex: opts.sealerIndex,
    events,
    ranges,
  };
}
