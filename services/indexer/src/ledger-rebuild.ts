import {
  type ChainRecord,
  chainRecordsByHeight,
  decodeChainRecord,
  decodeLogRecord,
  decodeTopicRecord,
  GENESIS_HASH,
  type Logger,
  type PositionedRecord,
  type TopicRecord,
  topicsDueBefore,
  topicsInCreationOrder,
} from "@evb/domain";
import { type KafkaClient, type LogInspector, type LogMessage, type OffsetRange, readOffsetRanges } from "@evb/eventlog";
import type { BlockSealer, ChainRecordStore, ChainStore, LogEpochStore, TopicStore } from "@evb/storage";
import { traceparentOfHeaders, tracingOn } from "@evb/telemetry";
import { traceSeal } from "./seal-trace.ts";

export interface RebuildOptions {
  kafka: KafkaClient;
  groupId: string;
  logTopic: string;
  chainTopic: string;
  inspector: LogInspector;
  epochs: LogEpochStore;
  chain: ChainStore;
  chainRecords: ChainRecordStore;
  sealer: BlockSealer;
  topics: TopicStore;
  logger: Logger;
  now: () => number;
}

/** `foreign`: refused because the ledger is not the one the chain records describe (another deployment's). */
export type RebuildResult = { ok: true; replayed: number } | { ok: false; reason: string; foreign?: true };

/**
 * Brings a ledger that lost blocks or opened topics (schema dropped, restored from an older
 * backup) back up to the chain records in Kafka: every record above the ledger's head is sealed
 * again from exactly its log ranges, with its seal time and sealer, through the same planner,
 * so heights, hashes, sequence numbers and eventIds come out identical (each block's hash is
 * checked). Topic records (`rest/open`) the ledger lacks are put back with their address,
 * creator and creation time, in creation order, each before the first rebuilt block sealed
 * after it or using it (`topicsDueBefore`). Runs under the group's rebuild lock, before the
 * group's log is consumed. Refuses (and seals nothing more) when the chain records do not
 * continue this ledger, name another log, or need records the log no longer holds.
 */
export async function rebuildFromChain(o: RebuildOptions): Promise<RebuildResult> {
  const chainEnd = (await o.inspector.offsets(o.chainTopic))[0];
  if (!chainEnd || chainEnd.high <= chainEnd.low) return { ok: true, replayed: 0 };
  return o.epochs.withRebuildLock(o.groupId, () => rebuildUnderLock(o, { from: chainEnd.low, to: chainEnd.high - 1 }));
}

/** The rebuild itself, under the group's rebuild lock: `chainRange` is the chain topic's offsets to read. */
async function rebuildUnderLock(o: RebuildOptions, chainRange: OffsetRange): Promise<RebuildResult> {
  const head = await o.chain.latestBlock(o.groupId);
  const height = head?.height ?? 0;
  const { chainRecords, topicRecords } = await readChainTopic(o, chainRange);
  const { byHeight, conflicts } = chainRecordsByHeight(chainRecords);
  if (conflicts.length > 0) {
    // Two ledgers sealed on this log (a second deployment on the same Kafka, say): which history
    // the clients were given cannot be told from here. Nothing is rebuilt or sealed.
    const reason =
      `group ${o.groupId}: the chain topic holds two different records for height(s) ${conflicts.slice(0, 10).join(", ")}: ` +
      "two ledgers sealed on this log; see docs/ledger.md";
    o.logger.error({ groupId: o.groupId, conflicts: conflicts.slice(0, 10) }, reason);
    return { ok: false, reason };
  }
  const foreign = await notThisLedger(o, byHeight, height);
  if (foreign) {
    o.logger.error({ groupId: o.groupId }, foreign);
    return { ok: false, reason: foreign, foreign: true };
  }
  const pending = await topicsToRestore(o, topicRecords);
  const above = [...byHeight.values()].filter((r) => r.height > height).sort((a, b) => a.height - b.height);
  if (above.length === 0) {
    await restoreTopics(o, pending);
    return { ok: true, replayed: 0 };
  }
  const refuse = (why: string): RebuildResult => {
    const reason = `group ${o.groupId}: cannot rebuild blocks ${height + 1}..${above.at(-1)?.height} from the chain records: ${why}; see docs/ledger.md`;
    o.logger.error({ groupId: o.groupId, ledgerHeight: height, chainHeight: above.at(-1)?.height }, reason);
    return { ok: false, reason };
  };
  const plan = await planReplay(o, head?.hash ?? GENESIS_HASH, height, above);
  if (!plan.ok) return refuse(plan.why);
  o.logger.warn(
    { groupId: o.groupId, from: height + 1, to: above.at(-1)?.height },
    "rebuilding lost blocks from the chain records and the log",
  );
  const failed = await replayBlocks(o, above, plan.ranges, pending);
  if (failed) return refuse(failed);
  await restoreTopics(o, pending);
  o.logger.warn({ groupId: o.groupId, blocks: above.length }, "rebuilt the ledger's lost blocks; every hash matches its chain record");
  // A bulk write: its tables' statistics (issue 29, item 7). Without them the ledger still works.
  await o.chain.analyse().catch((err: unknown) => o.logger.warn({ err, groupId: o.groupId }, "analysing the rebuilt ledger failed"));
  return { ok: true, replayed: above.length };
}

/** This group's chain records and topic records (with their offsets) in `range` of the chain topic. */
async function readChainTopic(
  o: RebuildOptions,
  range: OffsetRange,
): Promise<{ chainRecords: ChainRecord[]; topicRecords: { offset: number; record: TopicRecord }[] }> {
  const messages = await readOffsetRanges(o.kafka, o.chainTopic, new Map([[0, range]]));
  const chainRecords: ChainRecord[] = [];
  const topicRecords: { offset: number; record: TopicRecord }[] = [];
  for (const m of messages.get(0) ?? []) {
    const r = decodeChainRecord(m.value);
    if (r && r.groupId === o.groupId) chainRecords.push(r);
    const t = r ? null : decodeTopicRecord(m.value);
    if (t && t.groupId === o.groupId) topicRecords.push({ offset: m.offset, record: t });
  }
  return { chainRecords, topicRecords };
}

/** The recorded topics the ledger lacks, in creation order. */
async function topicsToRestore(o: RebuildOptions, topicRecords: { offset: number; record: TopicRecord }[]): Promise<TopicRecord[]> {
  const ordered = topicsInCreationOrder(topicRecords);
  const lacking = await o.topics.missing(
    o.groupId,
    ordered.map((t) => t.name),
  );
  return ordered.filter((t) => lacking.has(t.name));
}

async function restoreTopics(o: RebuildOptions, records: readonly TopicRecord[]): Promise<void> {
  await o.topics.restore(records.map((t) => ({ ...t, createdAt: t.createdAtMs })));
  if (records.length > 0) o.logger.warn({ groupId: o.groupId, topics: records.length }, "restored opened topics from the chain records");
}

export type ReplayPlan = { ok: true; ranges: Map<number, OffsetRange> } | { ok: false; why: string };

/**
 * Whether the chain records `above` the ledger's `height` can be sealed again, and from which
 * log ranges: they must follow the ledger's head without gaps, come from this group's log, which
 * must still hold their ranges, and each epoch they name must be recorded as this log's (an
 * epoch the ledger lost is recorded again here, before anything is sealed).
 */
export async function planReplay(
  o: Pick<RebuildOptions, "groupId" | "logTopic" | "inspector" | "epochs" | "now">,
  headHash: string,
  height: number,
  above: readonly ChainRecord[],
): Promise<ReplayPlan> {
  if (above.some((r, i) => r.height !== height + 1 + i)) return { ok: false, why: "the chain records have gaps" };
  if ((above[0] as ChainRecord).prevHash !== headHash) return { ok: false, why: "they do not continue this ledger's last block" };
  const identity = await o.inspector.identity(o.logTopic);
  if (above.some((r) => r.clusterId !== identity.clusterId || r.topicId !== identity.topicId)) {
    return {
      ok: false,
      why: `some were sealed from another Kafka log than ${o.logTopic} (cluster ${identity.clusterId}, topic ${identity.topicId})`,
    };
  }
  const ranges = logRangesOf(above);
  const log = await o.inspector.offsets(o.logTopic);
  const gone = [...ranges].filter(
    ([p, g]) => (log.find((l) => l.partition === p)?.low ?? 0) > g.from || (log.find((l) => l.partition === p)?.high ?? 0) <= g.to,
  );
  if (gone.length > 0) {
    return { ok: false, why: `the log no longer holds partition ${gone.map(([p, g]) => `${p} offsets ${g.from}..${g.to}`).join(", ")}` };
  }
  for (const r of above) {
    if (!(await o.epochs.ensureEpoch(o.groupId, r.epoch, identity, r.height - 1, r.prevHash, o.now()))) {
      return { ok: false, why: `epoch ${r.epoch} of this ledger is another log` };
    }
  }
  return { ok: true, ranges };
}

/** Per partition, the one offset range that covers every range the `records` were sealed from. */
export function logRangesOf(records: readonly ChainRecord[]): Map<number, OffsetRange> {
  const ranges = new Map<number, OffsetRange>();
  for (const r of records) {
    for (const g of r.ranges) {
      const cur = ranges.get(g.partition);
      ranges.set(g.partition, { from: Math.min(cur?.from ?? g.from, g.from), to: Math.max(cur?.to ?? g.to, g.to) });
    }
  }
  return ranges;
}

/**
 * The log records chain record `r` was sealed from, in its ranges' order, each with the
 * `traceparent` its Kafka record carries (the publish's producer span; the chain records carry
 * none). A rebuilt event keeps its trace context: with tracing on, the seal makes a `seal record`
 * span in that trace, as the first seal did, and stores that; with tracing off, the producer's
 * traceparent itself is stored. It is never hashed, so the blocks come out identical either way.
 */
export function recordsOfBlock(r: Pick<ChainRecord, "ranges">, fetched: ReadonlyMap<number, readonly LogMessage[]>): PositionedRecord[] {
  return r.ranges.flatMap((g) =>
    (fetched.get(g.partition) ?? [])
      .filter((m) => m.offset >= g.from && m.offset <= g.to)
      .map((m) => {
        const d = decodeLogRecord(m.value);
        return { partition: g.partition, offset: m.offset, record: d.ok ? d.record : null, traceparent: traceparentOfHeaders(m.headers) };
      }),
  );
}

/**
 * Seals each of `above` again from exactly its log ranges, with its seal time and sealer, the
 * topics due before it restored first (keeping each event's trace context: recordsOfBlock).
 * Stops at the first block whose height or hash differs from its chain record and says why; null
 * when every block matched.
 */
async function replayBlocks(
  o: RebuildOptions,
  above: readonly ChainRecord[],
  ranges: ReadonlyMap<number, OffsetRange>,
  pending: TopicRecord[],
): Promise<string | null> {
  const fetched = await readOffsetRanges(o.kafka, o.logTopic, ranges);
  for (const r of above) {
    const batch = recordsOfBlock(r, fetched);
    await restoreTopics(o, topicsDueBefore(pending, r.timestampMs, new Set(batch.flatMap((b) => (b.record ? [b.record.topic] : [])))));
    const trace = tracingOn() ? traceSeal(o.groupId, batch) : undefined;
    const replay = { replay: { timestampMs: r.timestampMs, sealerIndex: r.sealerIndex } };
    const out = await o.sealer.seal(o.groupId, r.epoch, trace?.records ?? batch, replay).then(
      (sealed) => {
        trace?.end();
        return sealed;
      },
      (err: unknown) => {
        trace?.end(err);
        throw err;
      },
    );
    const block = out.blocks[0];
    if (out.blocks.length !== 1 || block?.height !== r.height || block.hash !== r.hash) {
      return `sealing block ${r.height} again gave ${out.blocks.map((b) => `${b.height}:${b.hash}`).join(", ") || "no block"}, not ${r.hash}`;
    }
    await o.chainRecords.markWritten(o.groupId, [r.height]);
  }
  return null;
}

/**
 * Why the ledger is not the one these chain records describe, or null: the highest chain record
 * at or below the ledger's head must name the block the ledger holds at that height. Another
 * deployment's database (or one from another Kafka's history) holds other blocks there; sealing
 * on it, or rebuilding on top of it, would give clients' eventIds to other events.
 */
async function notThisLedger(o: RebuildOptions, byHeight: ReadonlyMap<number, ChainRecord>, head: number): Promise<string | null> {
  let at: ChainRecord | undefined;
  for (const r of byHeight.values()) if (r.height <= head && (!at || r.height > at.height)) at = r;
  if (!at) return null;
  const block = await o.chain.blockByHeight(o.groupId, at.height);
  if (block?.hash === at.hash) return null;
  return (
    `group ${o.groupId}: the ledger's block ${at.height} is ${block?.hash ?? "missing"}, but the chain records say ${at.hash}: ` +
    "this database holds another ledger than the one these Kafka topics record (another deployment's dump?); nothing is sealed " +
    "into it; see docs/ledger.md"
  );
}
