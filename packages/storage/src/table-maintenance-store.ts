import type pg from "pg";

/**
 * The tables whose rows are deleted or rewritten all day: backlog rows go once delivered, the
 * attempt log is pruned, and every recorded delivery rewrites its subscription's row. With
 * autovacuum off (as some CI and managed set-ups run Postgres) their dead rows were never
 * reclaimed (issue 29: subscription_backlog 44 → 92 MB, delivery_attempts 23 → 76 MB in a
 * 10-minute soak), and they never got statistics.
 */
export const CHURNING_TABLES = ["subscription_backlog", "delivery_attempts", "subscriptions"] as const;

/**
 * A vacuum waits for no lock longer than this: it only conflicts with another vacuum or analyse,
 * or DDL (a migration), and waiting behind DDL would queue every later DDL behind it.
 */
const LOCK_TIMEOUT_MS = 5_000;

/** "done": every table vacuumed. "busy": another notifier holds the round; nothing was done. */
export type MaintenanceRound = "done" | "busy";

/**
 * Runs `VACUUM (ANALYZE)` over the churning tables of the pool's schema, one notifier at a time.
 * VACUUM cannot run inside a transaction, so the round holds a session advisory lock (per
 * schema) on one client, taken with try: a second notifier skips its round instead of queueing
 * a second vacuum of the same tables. Each statement gets `statementTimeoutMs` on the server
 * (and the same wait on the client, above the pool's query timeout, which suits short queries).
 */
export class TableMaintenanceStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async vacuum(statementTimeoutMs: number, tables: readonly string[] = CHURNING_TABLES): Promise<MaintenanceRound> {
    const c = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const got = await c.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_lock(hashtext('evb.table-maintenance'), hashtext(current_schema())) AS ok",
      );
      if (!got.rows[0]?.ok) return "busy";
      try {
        await c.query(`SET statement_timeout = ${Math.trunc(statementTimeoutMs)}; SET lock_timeout = ${LOCK_TIMEOUT_MS}`);
        for (const t of tables) await c.query(long(`VACUUM (ANALYZE) "${t}"`, statementTimeoutMs));
      } finally {
        await c.query(
          "RESET statement_timeout; RESET lock_timeout; SELECT pg_advisory_unlock(hashtext('evb.table-maintenance'), hashtext(current_schema()))",
        );
      }
      return "done";
    } catch (err) {
      // A client whose query timed out may still have it running: never hand it to the next caller.
      broken = err as Error;
      throw err;
    } finally {
      c.release(broken);
    }
  }
}

/** A statement allowed `ms` (plus a second for the server's own cancel to arrive first). */
function long(text: string, ms: number): pg.QueryConfig {
  const q: pg.QueryConfig & { query_timeout: number } = { text, query_timeout: ms + 1_000 };
  return q;
}
