import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import type { Logger } from "@evb/domain";
import { inTransaction } from "./pool.ts";

/**
 * Waiting for another starter's migrations, and a migration itself (an index over a big
 * table), may take far longer than an ordinary query; both get an hour, not the pool's timeout.
 */
const MIGRATION_TIMEOUT_MS = 3_600_000;

/** A query with the migration timeout (pg reads `query_timeout` per query; its types omit it). */
function longQuery(text: string, values: unknown[] = []): pg.QueryConfig {
  const q: pg.QueryConfig & { query_timeout: number } = { text, values, query_timeout: MIGRATION_TIMEOUT_MS };
  return q;
}

const DEFAULT_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "migrations");

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Versioned SQL files named `NNN_name.sql`, in version order. */
export function loadMigrations(dir = DEFAULT_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .map((f) => ({ version: Number.parseInt(f, 10), name: f, sql: readFileSync(join(dir, f), "utf8") }))
    .sort((a, b) => a.version - b.version);
}

/**
 * Applies every migration not yet recorded in `schema_migrations`, each once, in order, inside
 * `schema` (created when missing). An advisory lock makes concurrent starters wait rather than
 * apply a file twice.
 */
export async function migrate(pool: pg.Pool, schema: string, logger: Logger, migrations = loadMigrations()): Promise<number> {
  return inTransaction(pool, async (client) => {
    await client.query(longQuery("SELECT pg_advisory_xact_lock(hashtext($1))", [`evb-migrate:${schema}`]));
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`SET LOCAL search_path TO "${schema}"`);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set((await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version));
    let applied = 0;
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query(longQuery(m.sql));
      await client.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      logger.info({ migration: m.name, schema }, "migration applied");
      applied++;
    }
    if (applied > 0) await analyse(client, schema);
    return applied;
  });
}

/**
 * Statistics for the tables just created or filled (a backfill): the Postgres the broker runs on
 * may have autovacuum off, so no table would get any otherwise (issue 29, item 7). ANALYZE samples
 * a bounded number of rows per table, so this stays short on a large ledger too.
 */
async function analyse(client: pg.PoolClient, schema: string): Promise<void> {
  const tables = await client.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [
    schema,
  ]);
  for (const { t } of tables.rows) await client.query(longQuery(`ANALYZE "${t.replaceAll('"', '""')}"`));
}
