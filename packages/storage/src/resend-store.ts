import type pg from "pg";
import { attemptColumns, type DeliveryAttempt, insertAttemptsSql } from "./delivery-attempt-store.ts";
import type { BacklogItem } from "./delivery-store.ts";

/** One event to send again to a subscription (admin/resendEvent), with its row id and failed attempts so far. */
export interface ResendItem extends BacklogItem {
  resendId: number;
  attempts: number;
}

/** What became of one resend attempt: `done` drops the row (2xx, or the budget spent), else it waits until `nextAttemptAt`. */
export interface ResendOutcome {
  resendId: number;
  done: boolean;
  attempts: number;
  nextAttemptAt: number;
  /** The attempt, for the delivery-attempt log. */
  attempt?: DeliveryAttempt;
}

/**
 * Resends (`subscription_resends`, migration 021): one event sent again to one subscription, out
 * of order, marked as a resend. The gateway asks for them; the notifier's delivery slice sends
 * them under the subscription's lease (the same signing, address checks and attempt log as every
 * callback) and settles each, fenced by the lease's token like every delivery record.
 */
export class ResendStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Asks for the event at (height, idx) to be sent again to `subscriptionId`; answers the resend's id. */
  async request(subscriptionId: string, at: { height: number; idx: number }, now: number): Promise<number> {
    const r = await this.pool.query<{ id: number }>(
      "INSERT INTO subscription_resends (subscription_id, height, idx, requested_at) VALUES ($1, $2, $3, $4) RETURNING id",
      [subscriptionId, at.height, at.idx, now],
    );
    return Number(r.rows[0]?.id);
  }

  /** The resends of `subscriptionId` due at `now`, oldest first, at most `limit`, with their events. */
  async due(subscriptionId: string, now: number, limit: number): Promise<ResendItem[]> {
    const r = await this.pool.query<ResendItem>(
      `SELECT r.id AS "resendId", r.attempts, r.height, r.idx, e.event_id AS "eventId", e.topic, e.content, e.extensions,
         e.ts AS "sealedAt", e.traceparent
       FROM subscription_resends r
       JOIN subscriptions s ON s.id = r.subscription_id
       JOIN events e ON e.group_id = s.group_id AND e.height = r.height AND e.idx = r.idx
       WHERE r.subscription_id = $1 AND r.next_attempt_at <= $2 ORDER BY r.id LIMIT $3`,
      [subscriptionId, now, limit],
    );
    return r.rows.map((row) => ({ ...row, resendId: Number(row.resendId), sealedAt: Number(row.sealedAt) }));
  }

  /**
   * Settles one resend attempt under the slice's lease: the row goes (`done`) or waits for its
   * next attempt, and the attempt goes to the delivery-attempt log, in one statement. False (and
   * nothing written) when the subscription is no longer live or `token` no longer holds its lease.
   */
  async settle(subscriptionId: string, token: number, o: ResendOutcome): Promise<boolean> {
    const r = await this.pool.query<{ ok: boolean }>(
      `WITH live AS (
         SELECT id FROM subscriptions WHERE id = $1 AND active AND lease_token = $2 FOR NO KEY UPDATE
       ), gone AS (
         DELETE FROM subscription_resends WHERE id = $3 AND $4 AND EXISTS (SELECT 1 FROM live) RETURNING 1
       ), kept AS (
         UPDATE subscription_resends SET attempts = $5, next_attempt_at = $6
         WHERE id = $3 AND NOT $4 AND EXISTS (SELECT 1 FROM live) RETURNING 1
       ), logged AS (
         ${insertAttemptsSql("$1", 7)} AND EXISTS (SELECT 1 FROM live)
       )
       SELECT EXISTS (SELECT 1 FROM live) AS ok`,
      [subscriptionId, token, o.resendId, o.done, o.attempts, o.nextAttemptAt, ...attemptColumns(o.attempt ? [o.attempt] : [])],
    );
    return r.rows[0]?.ok === true;
  }
}
