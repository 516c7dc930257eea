import pg from "pg";

export interface OracleBlock {
  height: number;
  hash: string;
  prevHash: string;
  sealedAt: number;
  txCount: number;
  sealer: string;
  sealerIndex: number;
}

/**
 * Reads the ledger straight from Postgres, so that admin replies are checked against the
 * stored truth rather than against another reply of the same code.
 */
export class LedgerOracle {
  private readonly pool: pg.Pool;

  constructor(databaseUrl: string, schema: string) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2, options: `-c search_path="${schema}"` });
  }

  async height(groupId: string): Promise<number> {
    const r = await this.pool.query("SELECT height FROM chain_heads WHERE group_id = $1", [groupId]);
    return Number(r.rows[0]?.height ?? 0);
  }

  async transactionCount(groupId: string): Promise<number> {
    const r = await this.pool.query("SELECT count(*)::int AS n FROM events WHERE group_id = $1", [groupId]);
    return r.rows[0].n as number;
  }

  async blocks(groupId: string): Promise<OracleBlock[]> {
    const r = await this.pool.query(
      `SELECT height, hash, prev_hash, sealed_at, tx_count, sealer, sealer_index FROM blocks WHERE group_id = $1 ORDER BY height`,
      [groupId],
    );
    return r.rows.map((b) => ({
      height: Number(b.height),
      hash: b.hash,
      prevHash: b.prev_hash,
      sealedAt: Number(b.sealed_at),
      txCount: b.tx_count,
      sealer: b.sealer,
      sealerIndex: b.sealer_index,
    }));
  }

  async block(groupId: string, height: number): Promise<OracleBlock> {
    const b = (await this.blocks(groupId)).find((x) => x.height === height);
    if (!b) throw new Error(`no block ${height} in group ${groupId}`);
    return b;
  }

  /** Transaction hashes of one block in block order. */
  async txHashes(groupId: string, height: number): Promise<string[]> {
    const r = await this.pool.query("SELECT tx_hash FROM events WHERE group_id = $1 AND height = $2 ORDER BY idx", [groupId, height]);
    return r.rows.map((e) => e.tx_hash as string);
  }

  /** Per block, how many events of `topic` it holds. */
  async heightsOfTopic(groupId: string, topic: string): Promise<Map<number, number>> {
    const r = await this.pool.query("SELECT height, count(*)::int AS n FROM events WHERE group_id = $1 AND topic = $2 GROUP BY height", [
      groupId,
      topic,
    ]);
    return new Map(r.rows.map((x) => [Number(x.height), x.n as number]));
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
