import type pg from "pg";
import {
  type BlockPlan,
  type FenceReading,
  fenceProblem,
  GENESIS_HASH,
  type KeptKey,
  type KeyedAnswer,
  type LedgerFence,
  type LedgerHead,
  type OffsetGap,
  type PositionedRecord,
  planBlock,
  type SealedBlock,
  sortRecords,
} from "@evb/domain";
import { inTransaction } from "./pool.ts";
import { topicsByNameSql } from "./topic-store.ts";

export interface Sealer {
  /** The indexer instance's sealer number; recorded as `sealer` "0x<n>" and `sealerIndex` n. */
  index: number;
}

/** A chain record's seal time and sealer, to seal a block again exactly as it was first sealed. */
export interface ReplayMetadata {
  timestampMs: number;
  sealerIndex: number;
}

/**
 * What one `seal` did: the blocks sealed, oldest first, partitions left out for a gap, and keyed
 * records answered without an event (a repeat of an idempotency key: docs/idempotency.md).
 */
export interface SealResult {
  blocks: SealedBlock[];
  gaps: OffsetGap[];
  answers: KeyedAnswer[];
}

/**
 * A seal refused by its fence (`fenceProblem`): the ledger under the indexer is not the one it
 * matched. Nothing was written; the indexer stops sealing the group and matches it again.
 */
export class LedgerFenceError extends Error {
  readonly groupId: string;
  constructor(groupId: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LedgerFenceError";
    this.groupId = groupId;
  }
}

/** What a seal may add to: `replay` seals again as a chain record says; `fence` is what the ledger must still be. */
export interface SealOptions {
  replay?: ReplayMetadata;
  fence?: LedgerFence;
}

/** One block's worth of a seal: what `sealPrefix` is asked, and what it did. */
interface Prefix {
  groupId: string;
  epoch: number;
  sorted: readonly PositionedRecord[];
  replay?: ReplayMetadata | undefined;
  fence?: LedgerFence | undefined;
}
type PrefixOutcome = { block: SealedBlock | null; gaps: OffsetGap[]; rest: PositionedRecord[]; answers: KeyedAnswer[] };

/** Postgres' "undefined_table": the ledger's tables are gone (a dropped schema). */
const UNDEFINED_TABLE = "42P01";

/**
 * The ledger's identity and the chain head of `groupId` now, as a fence for the next seals; null
 * when the ledger has no identity row. Read after a match (and a rebuild), before consuming.
 */
export async function readLedgerFence(pool: pg.Pool, groupId: string): Promise<LedgerFence | null> {
  const r = await pool.query<{ identity: string | null; height: number | null; hash: string | null }>(
    `SELECT (SELECT id FROM ledger_identity) AS identity,
            (SELECT height FROM chain_heads WHERE group_id = $1) AS height,
            (SELECT hash FROM chain_heads WHERE group_id = $1) AS hash`,
    [groupId],
  );
  const row = r.rows[0];
  if (!row?.identity) return null;
  return { identity: row.identity, height: row.height ?? 0, hash: row.hash ?? GENESIS_HASH };
}

/**
 * What a seal would find about its fence, read without any lock (the indexer's ledger watch: an
 * idle indexer notices a replaced ledger too). Tables that are gone (42P01) read as no identity.
 */
export async function readFenceReading(pool: pg.Pool, groupId: string, fenceHeight: number): Promise<FenceReading> {
  try {
    const r = await pool.query<FenceReading>(
      `SELECT (SELECT id FROM ledger_identity) AS identity,
              COALESCE((SELECT height FROM chain_heads WHERE group_id = $1), 0) AS height,
              (SELECT hash FROM blocks WHERE group_id = $1 AND height = $2) AS "hashAtFence"`,
      [groupId, fenceHeight],
    );
    return r.rows[0] as FenceReading;
  } catch (err) {
    if ((err as { code?: unknown }).code === "42P01") return { identity: null, height: 0, hashAtFence: null };
    throw err;
  }
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
  async seal(groupId: string, epoch: number, batch: readonly PositionedRecord[], opts: SealOptions = {}): Promise<SealResult> {
    const blocks: SealedBlock[] = [];
    const gaps: OffsetGap[] = [];
    const answers: KeyedAnswer[] = [];
    let rest = sortRecords(batch);
    let fence = opts.fence;
    while (rest.length > 0) {
      const out = await this.sealPrefix({ groupId, epoch, sorted: rest, replay: opts.replay, fence });
      // The next block of the same seal stands on this one.
      if (out.block && fence) fence = { ...fence, height: out.block.height, hash: out.block.hash };
      if (out.block) blocks.push(out.block);
      gaps.push(...out.gaps);
      answers.push(...out.answers);
      if (out.rest.length >= rest.length) throw new Error("block sealer made no progress"); // cannot happen: a block holds ≥ 1 record
      rest = out.rest;
    }
    return { blocks, gaps, answers };
  }

  /** One transaction: the next block of `p.sorted` (ordered by partition, offset), and what is left. */
  private async sealPrefix(p: Prefix): Promise<PrefixOutcome> {
    try {
      return await inTransaction(this.pool, (c) => this.sealIn(c, p));
    } catch (err) {
      if ((err as { code?: unknown }).code === UNDEFINED_TABLE) {
        throw new LedgerFenceError(p.groupId, `group ${p.groupId}: the ledger's tables are gone (${(err as Error).message})`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  private async sealIn(c: pg.PoolClient, { groupId, epoch, sorted, replay, fence }: Prefix): Promise<PrefixOutcome> {
    const head = await readHead(c, groupId, epoch, sorted, fence?.height ?? 0);
    if (fence) {
      const problem = fenceProblem(groupId, fence, head.fence);
      if (problem) throw new LedgerFenceError(groupId, problem);
    }
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
    await writePlan(c, groupId, epoch, plan, head);
    if (plan.block && plan.pruneKeysAt !== null) await writeKeys(c, groupId, plan.block.timestampMs, plan);
    const block = plan.block;
    return { block, gaps: plan.gaps, rest: plan.rest, answers: plan.answers };
  }
}

/**
 * Locks the group's chain head (creating it at genesis) in one statement, then, in a second one
 * (whose snapshot is taken after the lock, so it sees every seal committed before), reads the
 * partitions' next offsets and locks the batch's known topic rows (in one name order, so two seals
 * never deadlock). A topic created by `rest/open` after this read starts at sequence 0, as the
 * planner assumes.
 */
async function readHead(
  c: pg.PoolClient,
  groupId: string,
  epoch: number,
  sorted: readonly PositionedRecord[],
  fenceHeight: number,
): Promise<LedgerHead & { nextOffsets: Map<number, number>; fence: FenceReading }> {
  // DO UPDATE (to itself) rather than DO NOTHING: it locks the row and returns it in one round trip.
  const head = (
    await c.query<{ height: number; hash: string }>(
      `INSERT INTO chain_heads (group_id, height, hash) VALUES ($1, 0, $2)
       ON CONFLICT (group_id) DO UPDATE SET height = chain_heads.height RETURNING height, hash`,
      [groupId, GENESIS_HASH],
    )
  ).rows[0] as { height: number; hash: string };
  // Sorted: the rows are locked in this order, one order for every seal, so two never deadlock.
  const names = [...new Set(sorted.flatMap((r) => (r.record ? [r.record.topic] : [])))].sort();
  const read = (
    await c.query<{ offsets: [number, number][]; topics: [string, number, string][]; identity: string | null; at_fence: string | null }>(
      `SELECT
         (SELECT coalesce(json_agg(json_build_array(partition, next_offset)), '[]') FROM indexed_offsets
           WHERE group_id = $1 AND epoch = $2 AND partition = ANY($3::int[])) AS offsets,
         (SELECT coalesce(json_agg(json_build_array(name, seq, address)), '[]') FROM
           (${topicsByNameSql("name, seq, address", true, "$4")}) t) AS topics,
         (SELECT id FROM ledger_identity) AS identity,
         (SELECT hash FROM blocks WHERE group_id = $1 AND height = $5) AS at_fence`,
      [groupId, epoch, [...new Set(sorted.map((r) => r.partition))], names, fenceHeight],
    )
  ).rows[0] as { offsets: [number, number][]; topics: [string, number, string][]; identity: string | null; at_fence: string | null };
  const nextOffsets = new Map<number, number>(read.offsets.map(([p, o]) => [Number(p), Number(o)]));
  const topics = new Map<string, { seq: number; address: string }>(
    read.topics.map(([name, seq, address]) => [name, { seq: Number(seq), address }]),
  );
  const keyNames = new Set<string>();
  for (const r of sorted) if (r.record?.idempotency) keyNames.add(r.record.idempotency.key);
  return {
    height: head.height,
    hash: head.hash,
    nextOffsets,
    topics,
    ...(keyNames.size > 0 ? { keys: await readKeys(c, groupId, [...keyNames]) } : {}),
    fence: { identity: read.identity, height: head.height, hashAtFence: read.at_fence },
  };
}

/**
 * The batch's idempotency keys the ledger holds, under the chain-head lock (only seals write
 * them). Read only for a batch with keys: a publish without one never touches the table.
 */
async function readKeys(c: pg.PoolClient, groupId: string, keys: string[]): Promise<Map<string, KeptKey>> {
  const r = await c.query<{ key: string; content_hash: string; event_id: string; expires_at: number }>(
    "SELECT key, content_hash, event_id, expires_at FROM idempotency_keys WHERE group_id = $1 AND key = ANY($2::text[])",
    [groupId, keys],
  );
  return new Map(r.rows.map((k) => [k.key, { contentHash: k.content_hash, eventId: k.event_id, expiresAt: k.expires_at }]));
}

/**
 * A block that consumed keyed records: deletes the group's keys expired at its seal time
 * (`pruneKeysAt`) and writes the keys its events take. A key taken again after it expired
 * replaces its row, which the delete leaves to the insert.
 */
async function writeKeys(c: pg.PoolClient, groupId: string, sealedAt: number, plan: BlockPlan): Promise<void> {
  const keys = plan.keys;
  await c.query(
    `WITH pruned AS (
       DELETE FROM idempotency_keys WHERE group_id = $1 AND expires_at <= $2 AND NOT (key = ANY($3::text[])) RETURNING 1)
     INSERT INTO idempotency_keys (group_id, key, content_hash, event_id, sealed_at, expires_at)
     SELECT $1, k, h, e, $4, x FROM unnest($3::text[], $5::text[], $6::text[], $7::bigint[]) AS t(k, h, e, x)
     ON CONFLICT (group_id, key) DO UPDATE SET content_hash = EXCLUDED.content_hash, event_id = EXCLUDED.event_id,
       sealed_at = EXCLUDED.sealed_at, expires_at = EXCLUDED.expires_at`,
    [
      groupId,
      plan.pruneKeysAt,
      keys.map((k) => k.key),
      sealedAt,
      keys.map((k) => k.contentHash),
      keys.map((k) => k.eventId),
      keys.map((k) => k.expiresAt),
    ],
  );
}

/**
 * Writes a plan in one statement (data-modifying CTEs, one round trip): the partitions' new next
 * offsets, the topics the block creates (at their new sequence number; one `rest/open` created
 * meanwhile keeps its row and gets the number), the block, its events, the known topics' new
 * sequence numbers and the chain head. New and known topics are disjoint, so no row is written
 * twice in the statement. The events' foreign key on the block is checked at the statement's end.
 */
async function writePlan(c: pg.PoolClient, groupId: string, epoch: number, plan: BlockPlan, head: LedgerHead): Promise<void> {
  const offsets = `INSERT INTO indexed_offsets (group_id, epoch, partition, next_offset)
       SELECT $1, $2, p, o FROM unnest($3::int[], $4::bigint[]) AS t(p, o)
       ON CONFLICT (group_id, epoch, partition) DO UPDATE SET next_offset = GREATEST(indexed_offsets.next_offset, EXCLUDED.next_offset)`;
  const offsetParams = [groupId, epoch, [...plan.advance.keys()], [...plan.advance.values()]];
  const block = plan.block;
  if (!block) {
    if (plan.advance.size > 0) await c.query(offsets, offsetParams);
    return;
  }
  const ts = block.timestampMs;
  const events = block.events;
  const created = new Set(plan.newTopics.map((t) => t.name));
  const known = [...plan.topicSeqs].filter(([name]) => !created.has(name) && head.topics.has(name));
  // Traceparents only when tracing is on: otherwise the statement is the one it always was.
  const traced = events.some((e) => e.traceparent !== undefined);
  await c.query(
    `WITH
     advanced AS (${offsets} RETURNING 1),
     created AS (
       INSERT INTO topics (group_id, name, address, creator, created_at, seq, last_block, last_timestamp)
       SELECT $1, n, a, s, $6, q, $5, $6 FROM unnest($7::text[], $8::text[], $9::text[], $10::bigint[]) AS t(n, a, s, q)
       ON CONFLICT (group_id, name) DO UPDATE SET seq = EXCLUDED.seq, last_block = EXCLUDED.last_block, last_timestamp = EXCLUDED.last_timestamp
       RETURNING 1),
     sealed AS (
       INSERT INTO blocks (group_id, height, hash, prev_hash, sealed_at, tx_count, sealer, sealer_index, epoch, log_ranges)
       VALUES ($1, $5, $11, $12, $6, $13, $14, $15, $2, $16) RETURNING 1),
     written AS (
       INSERT INTO events (group_id, height, idx, event_id, topic, seq, content, extensions, sender, tx_hash, to_address, ts, epoch, kafka_partition, kafka_offset${traced ? ", traceparent" : ""})
       SELECT $1, $5, i, e, t, s, ct, x::json, snd, h, ta, $6, $2, p, o${traced ? ", tp" : ""}
       FROM unnest($17::int[], $18::text[], $19::text[], $20::bigint[], $21::bytea[], $22::text[], $23::text[], $24::text[], $25::text[], $26::int[], $27::bigint[]${traced ? ", $30::text[]" : ""})
         AS u(i, e, t, s, ct, x, snd, h, ta, p, o${traced ? ", tp" : ""})
       RETURNING 1),
     counted AS (
       UPDATE topics SET seq = u.s, last_block = $5, last_timestamp = $6
       FROM unnest($28::text[], $29::bigint[]) AS u(n, s) WHERE topics.group_id = $1 AND topics.name = u.n
       RETURNING 1)
     UPDATE chain_heads SET height = $5, hash = $11 WHERE group_id = $1`,
    [
      ...offsetParams,
      block.height,
      ts,
      plan.newTopics.map((t) => t.name),
      plan.newTopics.map((t) => t.address),
      plan.newTopics.map((t) => t.creator),
      plan.newTopics.map((t) => plan.topicSeqs.get(t.name) ?? 0),
      block.hash,
      block.prevHash,
      events.length,
      block.sealer,
      block.sealerIndex,
      JSON.stringify(block.ranges),
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
      known.map(([name]) => name),
      known.map(([, seq]) => seq),
      ...(traced ? [events.map((e) => e.traceparent ?? null)] : []),
    ],
  );
}
