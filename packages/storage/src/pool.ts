import { classifyPgFailure } from "@evb/domain";
import pg from "pg";

// int8 columns (heights, offsets, epoch-ms timestamps) stay far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

/** How long a query may wait for its answer when the caller sets nothing (DATABASE_QUERY_TIMEOUT_MS). */
const DEFAULT_QUERY_TIMEOUT_MS = 10_000;

/**
 * Pool options for one schema; `main.ts` passes them to `new pg.Pool()`. Every query fails after
 * `queryTimeoutMs` without an answer (a hung or partitioned server), and a connection that timed
 * out is dropped rather than reused, so a Postgres that stops answering gives prompt errors,
 * never requests that hang.
 */
export function poolOptions(url: string, schema: string, max: number, queryTimeoutMs = DEFAULT_QUERY_TIMEOUT_MS): pg.PoolConfig {
  return {
    connectionString: url,
    max,
    options: [`-c search_path="${schema}"`, ...SERVER_SIDE.map(([k, v]) => `-c ${k}=${v}`)].join(" "),
    connectionTimeoutMillis: Math.min(queryTimeoutMs, 10_000),
    query_timeout: queryTimeoutMs,
    // Notice a peer that vanished without closing (network partition) instead of waiting forever.
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    idleTimeoutMillis: 30_000,
  };
}

/**
 * Session settings every connection asks the server for, so that a client that vanished without
 * a word (a pulled cable, a dead VM: no FIN, no RST) holds no lock and no backend for long. No
 * transaction of ours waits on another system between its statements, so 5 s idle inside a
 * transaction means the client is gone: the server ends the session and its locks go (the
 * dispatch cursor's row lock held by a notifier that lost its link used to stop every callback of
 * the group for the whole outage). Keepalives and the user timeout find a silent client within
 * about 11 s of silence, and a backend waiting for a lock checks every 2 s that its client is
 * still there (a query abandoned by its client's timeout used to leave a waiting backend behind).
 * docs/configuration.md, "Postgres connection timeouts".
 */
const SERVER_SIDE: ReadonlyArray<readonly [string, string]> = [
  ["idle_in_transaction_session_timeout", "5000"],
  ["tcp_keepalives_idle", "5"],
  ["tcp_keepalives_interval", "2"],
  ["tcp_keepalives_count", "3"],
  ["tcp_user_timeout", "10000"],
  ["client_connection_check_interval", "2000"],
];

/**
 * True when `err` is Postgres not answering in time: a query past its timeout, no connection
 * within the pool's connect timeout, or a statement the server cancelled for its timeout.
 */
export function isStorageTimeout(err: unknown): boolean {
  return classifyPgFailure(err) === "STORAGE_TIMEOUT";
}

/**
 * Runs `fn` in one transaction on one client (an `OpenTransaction`, committed when `fn` returns,
 * rolled back when it throws).
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const t = await OpenTransaction.begin(pool);
  let out: T;
  try {
    out = await fn(t.client);
  } catch (err) {
    await t.abort(err);
    throw err;
  }
  await t.commit();
  return out;
}

/**
 * One transaction on one client, begun by `begin` and ended by `commit()` or `abort(err)` (the
 * first of them ends it; a later call does nothing). After a timeout the client still has a
 * query in flight, so it is dropped instead of rolled back (the server rolls back when the
 * connection closes) and never handed to the next caller.
 *
 * A checked-out client has no 'error' listener of the pool's, and pg emits 'error' when its
 * connection dies (a database restart, a cut network); unheard, that event would kill the
 * process. It is heard here: the query in flight fails with it, and the client is dropped.
 */
export class OpenTransaction {
  readonly client: pg.PoolClient;
  private broken: Error | undefined;
  private ended = false;
  private readonly onError = (err: Error): void => {
    this.broken = err;
  };

  private constructor(client: pg.PoolClient) {
    this.client = client;
    client.on("error", this.onError);
  }

  static async begin(pool: pg.Pool): Promise<OpenTransaction> {
    const t = new OpenTransaction(await pool.connect());
    try {
      await t.client.query("BEGIN");
    } catch (err) {
      await t.abort(err);
      throw err;
    }
    return t;
  }

  /** Commits; a failed COMMIT rolls back (or drops the client) and is thrown. */
  async commit(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    try {
      await this.client.query("COMMIT");
    } catch (err) {
      await this.rollback(err);
      throw err;
    }
    this.release();
  }

  /** Rolls back after `err` (or drops the client when `err` was a timeout). */
  async abort(err: unknown): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.rollback(err);
  }

  private async rollback(err: unknown): Promise<void> {
    if (isStorageTimeout(err)) this.broken = err as Error;
    else await this.client.query("ROLLBACK").catch((e: Error) => (this.broken = e));
    this.release();
  }

  private release(): void {
    this.client.removeListener("error", this.onError);
    this.client.release(this.broken);
  }
}
