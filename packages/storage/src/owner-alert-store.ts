import type pg from "pg";
import {
  type AlertState,
  alertTransition,
  type DeliveryOutcome,
  type OwnerAlert,
  type OwnerAlertType,
  type SubscriptionSettings,
} from "@evb/domain";
import { readSecret, SecretsKeyError } from "./secret-box.ts";
import type { Db } from "./subscription-writes.ts";

/**
 * Alerts to the owner (migration 023): the alert state of each subscription and the outbox the
 * notifiers send from. An alert is stored in the transaction (or statement) that makes the
 * transition raising it, so it is sent at least once whatever process crashes afterwards.
 */

/**
 * Copies an alert into the outbox for subscription `$1`, only when it has an alert URL.
 * `traceparent`: the delivery attempt's span that raised it (migration 025), NULL without tracing.
 */
function outboxInsert(from: string, type: string, failures: string, error: string, now: string, traceparent: string): string {
  return `INSERT INTO owner_alerts (subscription_id, type, group_id, topic, consecutive_failures, last_error, occurred_at, traceparent)
    SELECT s.id, ${type}::text, s.group_id, s.topic, ${failures}::int, ${error}::text, ${now}::bigint, ${traceparent}::text
    FROM ${from}subscriptions s JOIN subscription_settings ss ON ss.subscription_id = s.id AND ss.alert_url IS NOT NULL
    WHERE s.id = $1`;
}

/**
 * CTEs for the `delivered` statement (subscription-lifecycle.ts), after its `live` CTE: a
 * delivery ends any alert state, and ending "failing" or "suspended" raises
 * `subscription.recovered` (alertTransition's delivered row). Without an alert state, the usual
 * case, it costs one primary-key probe. `now` is the statement's epoch-ms parameter, `traceparent`
 * the one of the delivered attempt's span (the alert's trace parent; NULL without tracing).
 */
export function recoveredAlertSql(now: string, traceparent: string): string {
  return `recovered AS (
      DELETE FROM subscription_alert_state a WHERE a.subscription_id = $1 AND EXISTS (SELECT 1 FROM live)
      RETURNING a.consecutive_failures, a.last_error
    ), recovery_alert AS (
      ${outboxInsert("recovered r, ", "'subscription.recovered'", "r.consecutive_failures", "r.last_error", now, traceparent)}
    )`;
}

/**
 * Moves the alert state of subscription `id` after a failed attempt and stores the alert it
 * raises. Runs in the transaction that wrote the failure, after it: the subscription row's lock
 * is held, so one subscription's alert state is never decided twice at once.
 */
export async function recordFailureAlert(
  c: Db,
  id: string,
  f: { consecutiveFailures: number; dead: boolean; error: string; now: number; failingAfter: number; traceparent?: string | null },
): Promise<OwnerAlertType | null> {
  const r = await c.query<{ state: AlertState }>("SELECT state FROM subscription_alert_state WHERE subscription_id = $1 FOR UPDATE", [id]);
  const state = r.rows[0]?.state ?? "ok";
  const outcome: DeliveryOutcome = { kind: "failed", consecutiveFailures: f.consecutiveFailures, dead: f.dead };
  const t = alertTransition(state, outcome, f.failingAfter);
  if (t.next !== "ok")
    await c.query(
      `INSERT INTO subscription_alert_state (subscription_id, state, consecutive_failures, last_error, since) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (subscription_id) DO UPDATE SET state = EXCLUDED.state, consecutive_failures = EXCLUDED.consecutive_failures,
         last_error = EXCLUDED.last_error,
         since = CASE WHEN subscription_alert_state.state = EXCLUDED.state THEN subscription_alert_state.since ELSE EXCLUDED.since END`,
      [id, t.next, f.consecutiveFailures, f.error, f.now],
    );
  if (t.alert)
    await c.query(outboxInsert("", "$2", "$3", "$4", "$5", "$6"), [
      id,
      t.alert,
      f.consecutiveFailures,
      f.error,
      f.now,
      f.traceparent ?? null,
    ]);
  return t.alert;
}

/** An alert claimed for sending, with where it goes and what signs it. */
export interface ClaimedAlert extends OwnerAlert {
  /** Tries so far, this one included. */
  attempts: number;
  /** The subscription's alert URL now; null: it has none any more (the alert is dropped). */
  url: string | null;
  signing: Pick<SubscriptionSettings, "secret" | "previousSecret" | "previousUntil">;
  /** The traceparent of the delivery attempt that raised it; null without tracing. */
  traceparent: string | null;
  /** Why its subscription's own secret cannot be opened (SECRETS_KEY): the alert must not be sent, signed otherwise or not at all. */
  signingError?: string;
}

/** The outbox, for the senders. */
export class OwnerAlertStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * Claims up to `limit` due alerts for `claimMs`: the oldest of each subscription only, so one
   * subscription's alerts go out in order. A claim is a later `next_attempt_at`, so the alerts of a
   * sender that dies are tried again by any notifier once it runs out; several notifiers claim
   * different rows (SKIP LOCKED).
   */
  async claim(now: number, limit: number, claimMs: number): Promise<ClaimedAlert[]> {
    const r = await this.pool.query<ClaimedAlert & { secret: string | null; previousSecret: string | null; previousUntil: number | null }>(
      `WITH due AS (
         SELECT a.id, a.subscription_id FROM owner_alerts a
         WHERE a.next_attempt_at <= $1
           AND NOT EXISTS (SELECT 1 FROM owner_alerts b WHERE b.subscription_id = a.subscription_id AND b.id < a.id)
         ORDER BY a.id LIMIT $2 FOR UPDATE OF a SKIP LOCKED
       )
       UPDATE owner_alerts a SET next_attempt_at = $1 + $3, attempts = a.attempts + 1
       FROM due LEFT JOIN subscription_settings ss ON ss.subscription_id = due.subscription_id
       WHERE a.id = due.id
       RETURNING a.id::float8 AS id, a.type, a.subscription_id AS "subscriptionId", a.group_id AS "groupId", a.topic,
         a.consecutive_failures AS "consecutiveFailures", a.last_error AS "lastError", a.occurred_at::float8 AS "occurredAt",
         a.attempts, a.traceparent, ss.alert_url AS url, ss.secret, ss.previous_secret AS "previousSecret", ss.previous_until::float8 AS "previousUntil"`,
      [now, limit, claimMs],
    );
    return r.rows.map(({ secret, previousSecret, previousUntil, ...a }) => {
      try {
        const signing = {
          secret: readSecret(secret, a.subscriptionId),
          previousSecret: readSecret(previousSecret, a.subscriptionId),
          previousUntil,
        };
        return { ...a, signing };
      } catch (err) {
        if (!(err instanceof SecretsKeyError)) throw err;
        return { ...a, signing: { secret: null, previousSecret: null, previousUntil: null }, signingError: err.message };
      }
    });
  }

  /** The alert was answered 2xx, given up or has nowhere to go: it is not sent again. */
  async done(id: number): Promise<void> {
    await this.pool.query("DELETE FROM owner_alerts WHERE id = $1", [id]);
  }

  /** The alert is tried again at `at` (epoch ms). */
  async retryAt(id: number, at: number): Promise<void> {
    await this.pool.query("UPDATE owner_alerts SET next_attempt_at = $2 WHERE id = $1", [id, at]);
  }
}
