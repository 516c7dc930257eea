import type pg from "pg";
import { replaceNul } from "@evb/domain";

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
  /** The attempt's span as a traceparent (tracing on), which an alert it raises continues; not kept in the log. */
  traceparent?: string;
}

/** Longest excerpt kept, bytes of UTF-8. */
export const EXCERPT_BYTES = 256;

/** Rows deleted per prune statement, so that pruning never holds many row locks or a long transaction. */
const PRUNE_BATCH = 5_000;

/** The SQL parameters of `attempts` (in attempt order), for `insertAttemptsSql`. */
export function attemptColumns(attempts: readonly DeliveryAttempt[]): unknown[] {
  return [
    attempts.map((a) => a.eventId),
    attempts.map((a) => a.at),
    attempts.map((a) => Math.max(0, Math.round(a.durationMs))),
    attempts.map((a) => a.status),
    attempts.map((a) => (a.error === null ? null : replaceNul(a.error).slice(0, 500))),
    attempts.map((a) => (a.excerpt === null ? null : replaceNul(a.excerpt))),
  ];
}

/**
 * The insert of one log row holding the attempts of `attemptColumns` (parameters `$n` onwards)
 * for the subscription `$id`; nothing when there are none. Append a condition with `AND …`.
 */
export function insertAttemptsSql(id: string, n: number): string {
  return `INSERT INTO delivery_attempts
      (subscription_id, newest_at, attempt_count, event_ids, attempted_at, duration_ms, status, error, excerpt)
    SELECT ${id}, (SELECT max(t) FROM unnest($${n + 1}::bigint[]) t), cardinality($${n}::text[]), $${n}::text[], $${n + 1}::bigint[],
      $${n + 2}::integer[], $${n + 3}::integer[], $${n + 4}::text[], $${n + 5}::text[]
    WHERE cardinality($${n}::text[]) > 0`;
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
        `SELECT a.event_id AS "eventId", a.at, a.duration_ms AS "durationMs", a.status, a.error, a.excerpt
         FROM delivery_attempts d,
           unnest(d.event_ids, d.attempted_at, d.duration_ms, d.status, d.error, d.excerpt)
             WITH ORDINALITY AS a(event_id, at, duration_ms, status, error, excerpt, n)
         WHERE d.subscription_id = $1 ORDER BY d.id DESC, a.n DESC LIMIT $2 OFFSET $3`,
        [subscriptionId, pageSize, (pageNumber - 1) * pageSize],
      ),
      this.pool.query<{ n: string }>("SELECT coalesce(sum(attempt_count), 0) AS n FROM delivery_attempts WHERE subscription_id = $1", [
        subscriptionId,
      ]),
    ]);
    return { total: Number(total.rows[0]?.n ?? 0), attempts: rows.rows.map((r) => ({ ...r, at: Number(r.at) })) };
  }

  /**
   * Deletes log rows whose attempts are all older than `before` (epoch ms), and, for each of
   * `subscriptions`, the rows older than those holding its newest `keep` attempts (rows are
   * whole batches, so up to one batch more is kept), in batches of PRUNE_BATCH rows. Returns the
   * rows deleted.
   */
  async prune(before: number, keep: number, subscriptions: Iterable<string>): Promise<number> {
    let deleted = 0;
    // Walks the primary key from the oldest row: ids grow with time, so the rows past their age
    // are at its start and no index on time is needed (one less index to write per row).
    for (;;) {
      const r = await this.pool.query(
        `DELETE FROM delivery_attempts WHERE id IN (
           SELECT id FROM delivery_attempts WHERE newest_at < $1 ORDER BY id LIMIT ${PRUNE_BATCH})`,
        [before],
      );
      deleted += r.rowCount ?? 0;
      if ((r.rowCount ?? 0) < PRUNE_BATCH) break;
    }
    for (const id of subscriptions) {
      // The newest row at which the running count (newest first) reaches `keep`: everything older goes.
      const edge = await this.pool.query<{ id: number }>(
        `SELECT id FROM (SELECT id, sum(attempt_count) OVER (ORDER BY id DESC) AS kept
                         FROM delivery_attempts WHERE subscription_id = $1) x
         WHERE kept >= $2 ORDER BY id DESC LIMIT 1`,
        [id, keep],
      );
      const below = edge.rows[0]?.id;
      if (below === undefined) continue;
      for (;;) {
        const r = await this.pool.query(
          `DELETE FROM delivery_attempts WHERE id IN (
             SELECT id FROM delivery_attempts WHERE subscription_id = $1 AND id < $2 ORDER BY id LIMIT ${PRUNE_BATCH})`,
          [id, below],
        );
        deleted += r.rowCount ?? 0;
        if ((r.rowCount ?? 0) < PRUNE_BATCH) break;
      }
    }
    return deleted;
  }
}
