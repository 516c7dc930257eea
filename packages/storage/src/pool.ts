import pg from "pg";

// int8 columns (heights, offsets, epoch-ms timestamps) stay far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/** Pool options for one schema; `main.ts` passes them to `new pg.Pool()`. */
export function poolOptions(url: string, schema: string, max: number): pg.PoolConfig {
  return {
    connectionString: url,
    max,
    options: `-c search_path="${schema}"`,
    connectionTimeoutMillis: 10_000,
    // Notice a peer that vanished without closing (network partition) instead of waiting forever.
    keepAlive: true,
    idleTimeoutMillis: 30_000,
  };
}

/** Runs `fn` in one transaction on one client. */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const out = await fn(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
