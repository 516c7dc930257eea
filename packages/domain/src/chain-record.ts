import { z } from "zod";
import { decodeJsonRecord } from "./json-record.ts";
import type { LogIdentity } from "./log-epoch.ts";
import type { SealedBlock } from "./block-plan.ts";

/**
 * A block's boundaries and metadata, as written to the group's chain topic after the block's
 * Postgres commit and before its receipts: with the log's records in `ranges`, everything
 * `planBlock` needs to seal the very same block again (seal time, sealer, height, the previous
 * hash), and the hash it must come out with.
 */
export const ChainRecord = z.object({
  v: z.literal(1),
  groupId: z.string().min(1),
  height: z.number().int().positive(),
  hash: z.string(),
  prevHash: z.string(),
  timestampMs: z.number().int(),
  sealer: z.string(),
  sealerIndex: z.number().int(),
  epoch: z.number().int(),
  clusterId: z.string(),
  topicId: z.string(),
  ranges: z.array(z.object({ partition: z.number().int(), from: z.number().int(), to: z.number().int() })),
});
export type ChainRecord = z.infer<typeof ChainRecord>;

export function chainRecordOf(block: SealedBlock, epoch: number, log: LogIdentity): ChainRecord {
  return {
    v: 1,
    groupId: block.groupId,
    height: block.height,
    hash: block.hash,
    prevHash: block.prevHash,
    timestampMs: block.timestampMs,
    sealer: block.sealer,
    sealerIndex: block.sealerIndex,
    epoch,
    clusterId: log.clusterId,
    topicId: log.topicId,
    ranges: block.ranges,
  };
}

export function encodeChainRecord(r: ChainRecord): Buffer {
  return Buffer.from(JSON.stringify(r), "utf8");
}

export function decodeChainRecord(value: Buffer | null): ChainRecord | null {
  return decodeJsonRecord(ChainRecord, value);
}

/** The compacted single-partition Kafka topic holding a group's chain records, keyed by height. */
export function chainTopicName(prefix: string, groupId: string): string {
  return `${prefix}chain.${groupId}`;
}

/**
 * The key of a chain record in its group's chain topic: height and hash. A record written again
 * (the same block, after a crash) has the same key and compaction keeps one; a different record
 * for a height already written (two ledgers sealing one log) has another key, so compaction can
 * never let it erase the first: the topic keeps the history, and a rebuild sees the conflict.
 */
export function chainRecordKey(r: Pick<ChainRecord, "height" | "hash">): string {
  return `${r.height}:${r.hash}`;
}

/** A group's chain records by height, and the heights that hold two different ones. */
export function chainRecordsByHeight(records: Iterable<ChainRecord>): { byHeight: Map<number, ChainRecord>; conflicts: number[] } {
  const byHeight = new Map<number, ChainRecord>();
  const conflicts = new Set<number>();
  for (const r of records) {
    const seen = byHeight.get(r.height);
    if (seen && seen.hash !== r.hash) conflicts.add(r.height);
    else byHeight.set(r.height, r);
  }
  return { byHeight, conflicts: [...conflicts].sort((a, b) => a - b) };
}
