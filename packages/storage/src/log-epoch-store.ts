import type pg from "pg";
import { GENESIS_HASH, type LedgerEpoch, type LedgerLogState, type LogIdentity } from "@evb/domain";
import { inTransaction } from "./pool.ts";

/**
 * The ledger's log epochs (migration 007): which Kafka logs a group's ledger has indexed, and
 * its positions in each. The decision what to do with a log is `decideLogEpoch`'s; this class
 * reads and writes.
 */
export class LogEpochStore {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The group's epochs that are not retired, with their positions. */
  async read(groupId: string): Promise<LedgerLogState> {
    const epochs = await this.pool.query<{ epoch: number; cluster_id: string | null; topic_id: string | null; retired_at: number | null }>(
      "SELECT epoch, cluster_id, topic_id, retired_at FROM log_epochs WHERE group_id = $1 ORDER BY epoch",
      [groupId],
    );
    const offsets = await this.pool.query<{ epoch: number; partition: number; next_offset: number }>(
      "SELECT epoch, partition, next_offset FROM indexed_offsets WHERE group_id = $1",
      [groupId],
    );
    const live: LedgerEpoch[] = epochs.rows
      .filter((e) => e.retired_at === null)
      .map((e) => ({
        epoch: e.epoch,
        identity: e.cluster_id !== null && e.topic_id !== null ? { clusterId: e.cluster_id, topicId: e.topic_id } : null,
        nextOffsets: new Map(offsets.rows.filter((o) => o.epoch === e.epoch).map((o) => [o.partition, o.next_offset])),
      }));
    return { epochs: live, nextEpoch: Math.max(0, ...epochs.rows.map((e) => e.epoch)) + 1 };
  }

  /** Next offset per partition of one epoch. */
  async positions(groupId: string, epoch: number): Promise<Map<number, number>> {
    const rows = await this.pool.query<{ partition: number; next_offset: number }>(
      "SELECT partition, next_offset FROM indexed_offsets WHERE group_id = $1 AND epoch = $2",
      [groupId, epoch],
    );
    return new Map(rows.rows.map((r) => [r.partition, r.next_offset]));
  }

  /**
   * Records a new log as epoch `epoch` of the group, starting at `from` per partition, under
   * the chain-head lock (so that it is based on the head no seal is moving). Answers false when
   * another indexer adopted this log or took the number first; the caller decides again.
   */
  adopt(groupId: string, epoch: number, identity: LogIdentity, from: ReadonlyMap<number, number>, nowMs: number): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      await c.query("INSERT INTO chain_heads (group_id, height, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING", [groupId, GENESIS_HASH]);
      const head = (
        await c.query<{ height: number; hash: string }>("SELECT height, hash FROM chain_heads WHERE group_id = $1 FOR UPDATE", [groupId])
      ).rows[0] as { height: number; hash: string };
      const inserted = await c.query(
        `INSERT INTO log_epochs (group_id, epoch, cluster_id, topic_id, base_height, base_hash, adopted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [groupId, epoch, identity.clusterId, identity.topicId, head.height, head.hash, nowMs],
      );
      if (inserted.rowCount !== 1) return false;
      await c.query(
        `INSERT INTO indexed_offsets (group_id, epoch, partition, next_offset)
         SELECT $1, $2, p, o FROM unnest($3::int[], $4::bigint[]) AS t(p, o)`,
        [groupId, epoch, [...from.keys()], [...from.values()]],
      );
      return true;
    });
  }

  /** Gives epoch 0 of a ledger older than log identities the identity of the log that fits it. */
  async claim(groupId: string, epoch: number, identity: LogIdentity): Promise<boolean> {
    const r = await this.pool.query(
      "UPDATE log_epochs SET cluster_id = $3, topic_id = $4 WHERE group_id = $1 AND epoch = $2 AND cluster_id IS NULL",
      [groupId, epoch, identity.clusterId, identity.topicId],
    );
    return r.rowCount === 1;
  }

  /**
   * Records an epoch a chain record names (a rebuild into a ledger that lost it). False when the
   * number or the identity is taken by another epoch.
   */
  async ensureEpoch(
    groupId: string,
    epoch: number,
    identity: LogIdentity,
    baseHeight: number,
    baseHash: string,
    nowMs: number,
  ): Promise<boolean> {
    await this.pool.query(
      `INSERT INTO log_epochs (group_id, epoch, cluster_id, topic_id, base_height, base_hash, adopted_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
      [groupId, epoch, identity.clusterId, identity.topicId, baseHeight, baseHash, nowMs],
    );
    const row = await this.pool.query<{ cluster_id: string | null; topic_id: string | null }>(
      "SELECT cluster_id, topic_id FROM log_epochs WHERE group_id = $1 AND epoch = $2",
      [groupId, epoch],
    );
    const r = row.rows[0];
    return r?.cluster_id === identity.clusterId && r.topic_id === identity.topicId;
  }

  /**
   * Runs `fn` holding the group's rebuild lock (a session advisory lock of this schema), so that
   * indexers starting together replay a group's chain records once. Waits with short tries, not
   * one long query, so the wait is not cut by the query timeout.
   */
  async withRebuildLock<T>(groupId: string, fn: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const key = "SELECT hashtext(current_schema() || ':ledger-rebuild:' || $1) AS k";
    try {
      const k = (await client.query<{ k: number | null }>(key, [groupId])).rows[0]?.k;
      // current_schema() is null while the schema does not exist (dropped): pg_try_advisory_lock(null)
      // is null too, and this loop waited for it forever.
      if (k === null || k === undefined) throw new Error("the ledger's schema does not exist (dropped?)");
      while (!(await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1) AS ok", [k])).rows[0]?.ok) {
        await new Promise((r) => setTimeout(r, 250));
      }
      try {
        return await fn();
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [k]);
      }
    } finally {
      client.release();
    }
  }
}
