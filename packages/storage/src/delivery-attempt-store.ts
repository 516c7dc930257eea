import type pg from "pg";

/** One callback attempt, as the delivery-attempt log keeps it. */
export interface DeliveryAttempt {
  eventId: string;
  /** Epoch ms when the POST started. */
  at: number;
  durationMs: number;
  /** HTTP status, null when no answer came back (connection refused, timeout, policy refusal). */
  status: number | null;
  /** Why the attempt failed; null when delivered. */
  error: string | null;
  /** The start of the answer's body (at most 256 bytes of UTF-8); null when there was none. */
  excerpt: string | null;
}

/** Longest excerpt kept, bytes of UTF-8. */
export const EXCERPT_BYTES = 256;

/** Rows deleted per prune statement, so that pruning never holds many row locks or a long transaction. */
const PRUNE_BATCH = 5_000;

/** The SQL parameters of `attempts`, for one `unnest` insert (see DeliveryStore). */
export function attemptColumns(attempts: readonly DeliveryAttempt[]): unknown[] {
  return [
    attempts.map((a) => a.eventId),
    attempts.map((a) => a.at),
    attempts.map((a) => Math.max(0, Math.round(a.durationMs))),
    attempts.map((a) => a.status),
    attempts.map((a) => (a.error === null ? null : pgText(a.error).slice(0, 500))),
    attempts.map((a) => (a.excerpt === null ? null : pgText(a.excerpt))),
  ];
}

/** The insert for `attemptColumns` at parameter `$n` onwards; `$id` is the subscription id parameter. */
export function insertAttemptsSql(id: string, n: number): string {
  return `INSERT INTO delivery_attempts (subscription_id, event_id, attempted_at, duration_ms, status, error, excerpt)
    SELECT ${id}, a.* FROM unnest($${n}::text[], $${n + 1}::bigint[], $${n + 2}::integer[], $${n + 3}::integer[],
      $${n + 4}::text[], $${n + 5}::text[]) AS a`;
}

/** Postgres text cannot hold U+0000. */
function pgText(s: string): string {
  return s.includes("\u0000") ? s.replaceAll("\u0000", "\uFFFD") : s;
}

/**
 * The first `EXCERPT_BYTES` bytes of an answer body as text, cut at a character boundary (an
 * invalid sequence shows as U+FFFD). Null for an empty body.
 */
export function excerptOf(body: Buffer): string | null {
  if (body.length === 0) return null;
  let text = body.subarray(0, EXCERPT_BYTES).toString("utf8");
  while (Buffer.byteLength(text) > EXCERPT_BYTES) text = text.slice(0, -1);
  return text;
}

/** Reads and prunes the delivery-attempt log (written by DeliveryStore with the delivery records). */
export class DeliveryAttemptStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** One page (1-based) of a subscription's attempts, newest first, and how many are kept in all. */
  async page(subscriptionId: string, pageNumber: number, pageSize: number): Promise<{ total: number; attempts: DeliveryAttempt[] }> {
    const [rows, total] = await Promise.all([
      this.pool.query<DeliveryAttempt>(
        `SELECT event_id AS "eventId", attempted_at AS "at", duration_ms AS "durationMs", status, error, excerpt
         FROM delivery_attempts WHERE subscription_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`,
        [subscriptionId, pageSize, (pageNumber - 1) * pageSize],
      ),
      this.pool.query<{ n: string }>("SELECT count(*) AS n FROM delivery_attempts WHERE subscription_id = $1", [subscriptionId]),
    ]);
    return { total: Number(total.rows[0]?.n ?? 0), attempts: rows.rows.map((r) => ({ ...r, at: Number(r.at) })) };
  }

  /**
   * Deletes attempts older than `before` (epoch ms), and beyond the newest `keep` of each of
   * `subscriptions`, in batches of PRUNE_BATCH rows. Returns the rows deleted.
   */
  async prune(before: number, keep: number, subscriptions: Iterable<string>): Promise<number> {
    let deleted = 0;
    // Walks the primary key from the oldest row: ids grow with time, so the rows past their time
    // are at its start and no index on attempted_at is needed (one less index to write per attempt).
    for (;;) {
      const r = await this.pool.query(
        `DELETE FROM delivery_attempts WHERE id IN (
           SELECT id FROM delivery_attempts WHERE attempted_at < $1 ORDER BY id LIMIT ${PRUNE_BATCH})`,
        [before],
      );
      deleted += r.rowCount ?? 0;
      if ((r.rowCount ?? 0) < PRUNE_BATCH) break;
    }
    for (const id of subscriptions) {
      for (;;) {
        const r = await this.pool.query(
          `DELETE FROM delivery_attempts WHERE id IN (
             SELECT id FROM delivery_attempts WHERE subscription_id = $1
               AND id <= (SELECT id FROM delivery_attempts WHERE subscription_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)
             ORDER BY id LIMIT ${PRUNE_BATCH})`,
          [id, keep],
        );
        deleted += r.rowCount ?? 0;
        if ((r.rowCount ?? 0) < PRUNE_BATCH) break;
      }
    }
    return deleted;
  }
}
