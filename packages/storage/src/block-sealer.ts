import type pg from "pg";
import {
  GENESIS_HASH,
  type LedgerHead,
  type OffsetGap,
  type PositionedRecord,
  planBlock,
  type SealedBlock,
  sortRecords,
} from "@evb/domain";
import { inTransaction } from "./pool.ts";

export interface Sealer {
  /** The indexer instance's sealer number; recorded as `sealer` "0x<n>" and `sealerIndex` n. */
  index: number;
}

/** A chain record's seal time and sealer, to seal a block again exactly as it was first sealed. */
export interface ReplayMetadata {
  timestampMs: number;
  sealerIndex: number;
}

/** What one `seal` did: the blocks sealed, oldest first, and partitions left out for a gap. */
export interface SealResult {
  blocks: SealedBlock[];
  gaps: OffsetGap[];
}

/**
 * Seals fetched Kafka records into the next blocks of a group. Each block is ONE Postgres
 * transaction; every decision in it is `planBlock`'s (packages/domain), this class only reads
 * what the planner needs under the lock and writes what it planned.
 *
 * Invariants (what the crash tests prove):
 * - The chain head row is locked first, so all seals of a group are serialised: heights are
 *   gapless and each block's prev_hash is the previous block's hash.
 * - Positions are per log epoch (the Kafka log the records come from, see `LogEpochStore`).
 * - `indexed_offsets` is read under that lock and advanced in the same transaction, so a
 *   record redelivered after a crash, or fetched by two consumers across a rebalance, is
 *   skipped: each (group, partition, offset) is indexed at most once. The unique index on
 *   events' Kafka position is the backstop.
 * - Nothing is visible until COMMIT; a crash before it leaves no trace and Kafka redelivers.
 */
export class BlockSealer {
  private readonly pool: pg.Pool;
  private readonly sealer: Sealer;
  private readonly now: () => number;

  constructor(opts: { pool: pg.Pool; sealer: Sealer; now?: () => number }) {
    this.pool = opts.pool;
    this.sealer = opts.sealer;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Seals every record of the batch that is not indexed yet, in Kafka order, into as few
   * blocks as possible (usually one; the planner ends a block early only for an eventId
   * collision). Partitions whose records start past the ledger's position are left out and
   * reported as gaps.
   */
  async seal(groupId: string, epoch: number, batch: readonly PositionedRecord[], replay?: ReplayMetadata): Promise<SealResult> {
    const blocks: SealedBlock[] = [];
    const gaps: OffsetGap[] = [];
    let rest = sortRecords(batch);
    while (rest.length > 0) {
      const out = await this.sealPrefix(groupId, epoch, rest, replay);
      if (out.block) blocks.push(out.block);
      gaps.push(...out.gaps);
      if (out.rest.length >= rest.length) throw new Error("block sealer made no progress"); // cannot happen: a block holds ≥ 1 record
      rest = out.rest;
    }
    return { blocks, gaps };
  }

  /** One transaction: the next block of `sorted` (ordered by partition, offset), and what is left. */
  private sealPrefix(
    groupId: string,
    epoch: number,
    sorted: readonly PositionedRecord[],
    replay?: ReplayMetadata,
  ): Promise<{ block: SealedBlock | null; gaps: OffsetGap[]; rest: PositionedRecord[] }> {
    return inTransaction(this.pool, async (c) => {
      const head = await readHead(c, groupId, epoch, sorted);
      if (replay) {
        // A chain record's ranges hold every record of its block. Records between the ledger's
        // position and the range were consumed without making a block (undecodable ones): a
        // replay starts at the range. One below the position stays skipped, and the block then
        // fails its hash check rather than index a record twice.
        for (const p of new Set(sorted.map((r) => r.partition))) {
          const first = sorted.find((r) => r.partition === p) as PositionedRecord;
          const next = head.nextOffsets.get(p);
          if (next === undefined || next < first.offset) head.nextOffsets.set(p, first.offset);
        }
      }
      const plan = planBlock(head, sorted, {
        groupId,
        timestampMs: replay?.timestampMs ?? this.now(),
        sealerIndex: replay?.sealerIndex ?? this.sealer.index,
      });
      if (plan.advance.size > 0) {
        await c.query(
          `INSERT INTO indexed_offsets (group_id, epoch, partition, next_offset)
           SELECT $1, $2, p, o FROM unnest($3::int[], $4::bigint[]) AS t(p, o)
           ON CONFLICT (group_id, epoch, partition) DO UPDATE SET next_offset = GREATEST(indexed_offsets.next_offset, EXCLUDED.next_offset)`,
          [groupId, epoch, [...plan.advance.keys()], [...plan.advance.values()]],
        );
      }
      const block = plan.block;
      if (!block) return { block: null, gaps: plan.gaps, rest: plan.rest };
      const ts = block.timestampMs;
      if (plan.newTopics.length > 0) {
        await c.query(
          `INSERT INTO topics (group_id, name, address, creator, created_at)
           SELECT $1, n, a, s, $5 FROM unnest($2::text[], $3::text[], $4::text[]) AS t(n, a, s) ON CONFLICT DO NOTHING`,
          [groupId, plan.newTopics.map((t) => t.name), plan.newTopics.map((t) => t.address), plan.newTopics.map((t) => t.creator), ts],
        );
      }
      await c.query(
        `INSERT INTO blocks (group_id, height, hash, prev_hash, sealed_at, tx_count, sealer, sealer_index, epoch, log_ranges)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
        [
          groupId,
          block.height,
          block.hash,
          block.prevHash,
          ts,
          block.events.length,
          block.sealer,
          block.sealerIndex,
          epoch,
          JSON.stringify(block.ranges),
        ],
      );
      const events = block.events;
      await c.query(
        `INSERT INTO events (group_id, height, idx, event_id, topic, seq, content, extensions, sender, tx_hash, to_address, ts, epoch, kafka_partition, kafka_offset)
         SELECT $1, $2, i, e, t, s, ct, x::json, snd, h, ta, $3, $15, p, o
         FROM unnest($4::int[], $5::text[], $6::text[], $7::bigint[], $8::bytea[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int[], $14::bigint[])
           AS u(i, e, t, s, ct, x, snd, h, ta, p, o)`,
        [
          groupId,
          block.height,
          ts,
          events.map((e) => e.idx),
          events.map((e) => e.eventId),
          events.map((e) => e.record.topic),
          events.map((e) => e.seq),
          events.map((e) => Buffer.from(e.record.content, "utf8")),
          events.map((e) => JSON.stringify(e.record.extensions)),
          events.map((e) => e.record.sender),
          events.map((e) => e.txHash),
          events.map((e) => e.toAddress),
          events.map((e) => e.partition),
          events.map((e) => e.offset),
          epoch,
        ],
      );
      await c.query(
        `UPDATE topics SET seq = u.s, last_block = $2, last_timestamp = $3
         FROM unnest($4::text[], $5::bigint[]) AS u(n, s) WHERE topics.group_id = $1 AND topics.name = u.n`,
        [groupId, block.height, ts, [...plan.topicSeqs.keys()], [...plan.topicSeqs.values()]],
      );
      await c.query("UPDATE chain_heads SET height = $2, hash = $3 WHERE group_id = $1", [groupId, block.height, block.hash]);
      return { block, gaps: plan.gaps, rest: plan.rest };
    });
  }
}

/**
 * Locks the group's chain head (creating it at genesis), then reads the partitions' next
 * offsets and locks the batch's known topic rows (in name order, so two seals never deadlock).
 * A topic created by `rest/open` after this read starts at sequence 0, as the planner assumes.
 */
async function readHead(
  c: pg.PoolClient,
  groupId: string,
  epoch: number,
  sorted: readonly PositionedRecord[],
): Promise<LedgerHead & { nextOffsets: Map<number, number> }> {
  await c.query("INSERT INTO chain_heads (group_id, height, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING", [groupId, GENESIS_HASH]);
  const head = (
    await c.query<{ height: number; hash: string }>("SELECT height, hash FROM chain_heads WHERE group_id = $1 FOR UPDATE", [groupId])
  ).rows[0] as { height: number; hash: string };
  const nextOffsets = new Map<number, number>();
  const offsets = await c.query<{ partition: number; next_offset: number }>(
    "SELECT partition, next_offset FROM indexed_offsets WHERE group_id = $1 AND epoch = $2 AND partition = ANY($3::int[])",
    [groupId, epoch, [...new Set(sorted.map((r) => r.partition))]],
  );
  for (const row of offsets.rows) nextOffsets.set(row.partition, row.next_offset);
  const names = [...new Set(sorted.flatMap((r) => (r.record ? [r.record.topic] : [])))];
  const topics = new Map<string, { seq: number; address: string }>();
  if (names.length > 0) {
    const rows = await c.query<{ name: string; seq: number; address: string }>(
      "SELECT name, seq, address FROM topics WHERE group_id = $1 AND name = ANY($2::text[]) ORDER BY name FOR UPDATE",
      [groupId, names],
    );
    for (const row of rows.rows) topics.set(row.name, { seq: row.seq, address: row.address });
  }
  return { height: head.height, hash: head.hash, nextOffsets, topics };
}
