import type pg from "pg";
import type { ChainRecord } from "@evb/domain";

/**
 * Which blocks still lack their chain record in Kafka (`blocks.chain_written`, migration 008),
 * and those records rebuilt from the ledger: a crash between a block's commit and its chain
 * record's write, or a Kafka that refused the write, is made good by writing them later.
 */
export class ChainRecordStore {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Blocks of the group without a chain record yet, oldest first; `sealedBeforeMs` skips ones still being written. */
  async unwritten(groupId: string, sealedBeforeMs: number, limit = 1000): Promise<ChainRecord[]> {
    const rows = await this.pool.query<{
      height: number;
      hash: string;
      prev_hash: string;
      sealed_at: number;
      sealer: string;
      sealer_index: number;
      epoch: number;
      log_ranges: ChainRecord["ranges"];
      cluster_id: string;
      topic_id: string;
    }>(
      `SELECT b.height, b.hash, b.prev_hash, b.sealed_at, b.sealer, b.sealer_index, b.epoch, b.log_ranges, e.cluster_id, e.topic_id
       FROM blocks b JOIN log_epochs e ON e.group_id = b.group_id AND e.epoch = b.epoch
       WHERE b.group_id = $1 AND NOT b.chain_written AND b.log_ranges IS NOT NULL AND e.cluster_id IS NOT NULL AND b.sealed_at < $2
       ORDER BY b.height LIMIT $3`,
      [groupId, sealedBeforeMs, limit],
    );
    return rows.rows.map((r) => ({
      v: 1,
      groupId,
      height: r.height,
      hash: r.hash,
      prevHash: r.prev_hash,
      timestampMs: r.sealed_at,
      sealer: r.sealer,
      sealerIndex: r.sealer_index,
      epoch: r.epoch,
      clusterId: r.cluster_id,
      topicId: r.topic_id,
      ranges: r.log_ranges,
    }));
  }

  async markWritten(groupId: string, heights: readonly number[]): Promise<void> {
    if (heights.length === 0) return;
    await this.pool.query("UPDATE blocks SET chain_written = true WHERE group_id = $1 AND height = ANY($2::bigint[])", [
      groupId,
      [...heights],
    ]);
  }
}
