import type pg from "pg";
import { holdsNul } from "@evb/domain";

export interface BlockRow {
  height: number;
  hash: string;
  /** Seal time, epoch ms. */
  sealedAt: number;
  txCount: number;
  /** `0x<hex index>` of the sealing indexer. */
  sealer: string;
  sealerIndex: number;
}

export interface TransactionRow {
  txHash: string;
  sender: string;
  toAddress: string;
  height: number;
  /** The block's seal time, epoch ms. */
  timestampMs: number;
}

export interface ChainTotals {
  latestBlock: number;
  transactionCount: number;
}

const BLOCK_COLUMNS = 'height, hash, sealed_at AS "sealedAt", tx_count AS "txCount", sealer, sealer_index AS "sealerIndex"';

/** Read-only views of a group's chain for the admin endpoints. */
export class ChainStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * Statistics for the ledger's tables after a bulk write (a rebuild sealing many blocks at once):
   * with autovacuum off nothing else gives them any. ANALYZE samples a bounded number of rows, so
   * it takes about the same on any ledger; the wait is a minute, not the pool's query timeout.
   */
  async analyse(): Promise<void> {
    const q: pg.QueryConfig & { query_timeout: number } = { text: "ANALYZE blocks, events, topics", query_timeout: 60_000 };
    await this.pool.query(q);
  }

  /** Latest height and transaction count (both 0 before the group's first block). */
  async totals(groupId: string): Promise<ChainTotals> {
    const r = await this.pool.query<{ height: number; tx_total: number }>("SELECT height, tx_total FROM chain_heads WHERE group_id = $1", [
      groupId,
    ]);
    const row = r.rows[0];
    return { latestBlock: row?.height ?? 0, transactionCount: row?.tx_total ?? 0 };
  }

  async blockByHeight(groupId: string, height: number): Promise<BlockRow | null> {
    const r = await this.pool.query<BlockRow>(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE group_id = $1 AND height = $2`, [groupId, height]);
    return r.rows[0] ?? null;
  }

  async blockByHash(groupId: string, hash: string): Promise<BlockRow | null> {
    if (holdsNul(hash)) return null; // no stored hash holds U+0000
    const r = await this.pool.query<BlockRow>(`SELECT ${BLOCK_COLUMNS} FROM blocks WHERE group_id = $1 AND hash = $2`, [groupId, hash]);
    return r.rows[0] ?? null;
  }

  async latestBlock(groupId: string): Promise<BlockRow | null> {
    const r = await this.pool.query<BlockRow>(
      `SELECT ${BLOCK_COLUMNS} FROM blocks WHERE group_id = $1 AND height = (SELECT height FROM chain_heads WHERE group_id = $1)`,
      [groupId],
    );
    return r.rows[0] ?? null;
  }

  /** Blocks with heights in [from, to], newest first. */
  async blocksBetween(groupId: string, from: number, to: number): Promise<BlockRow[]> {
    const r = await this.pool.query<BlockRow>(
      `SELECT ${BLOCK_COLUMNS} FROM blocks WHERE group_id = $1 AND height BETWEEN $2 AND $3 ORDER BY height DESC`,
      [groupId, from, to],
    );
    return r.rows;
  }

  /** Transactions of one block in block order, `limit` of them from position `offset`. */
  async transactionsOfBlock(groupId: string, height: number, offset: number, limit: number): Promise<TransactionRow[]> {
    const r = await this.pool.query<TransactionRow>(
      `SELECT tx_hash AS "txHash", sender, to_address AS "toAddress", height, ts AS "timestampMs"
       FROM events WHERE group_id = $1 AND height = $2 ORDER BY idx LIMIT $3 OFFSET $4`,
      [groupId, height, limit, offset],
    );
    return r.rows;
  }
}
