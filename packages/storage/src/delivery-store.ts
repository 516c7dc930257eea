import type pg from "pg";
import { mayRaiseAlert } from "@evb/domain";
import { type CatchUpState, catchUpPage } from "./catch-up.ts";
import { recordFailureAlert } from "./owner-alert-store.ts";
import { inTransaction } from "./pool.ts";
import { PG_NOW_MS, write } from "./subscription-lifecycle.ts";
import type { DeliveredEvents, FailedAttempt } from "./subscription-writes.ts";
import { ROW_COLUMNS, STATS_COLUMNS, type SubscriptionRow, type SubscriptionStats } from "./subscription-row.ts";

/** Events looked at per refill transaction of a resumed subscription. */
const CATCH_UP_PAGE = 5_000;

export interface CatchUpResult {
  added: number;
  /** Nothing (more) to refill: delivery may start. */
  done: boolean;
  stats: SubscriptionStats;
}

/**
 * A slice's lease: taken (with the row as the lease left it), or not: `retryInMs` until another
 * worker's lease runs out, null when the subscription is not live (nothing to deliver).
 */
export type LeaseResult =
  | {
      ok: true;
      token: number;
      row: SubscriptionRow;
      /** The first events of the backlog, in order (bounded in count and bytes). */
      backlog: BacklogItem[];
      /** The backlog holds more than `backlog`. */
      more: boolean;
    }
  | { ok: false; retryInMs: number | null };

/** Most events the lease statement reads (a job's first batch; later batches are read alone). */
const FIRST_READ_EVENTS = 16;
/** Most content bytes the lease statement reads past the first event. */
const FIRST_READ_BYTES = 256 * 1024;

/** Successful deliveries of one slice, in delivery order, recorded together under its lease. */
export type DeliveryBatch = DeliveredEvents;

export interface BacklogItem {
  height: number;
  idx: number;
  eventId: string;
  topic: string;
  content: Buffer;
  extensions: Record<string, string>;
  /** Epoch ms when the event's block was sealed. */
  sealedAt: number;
  /** The W3C traceparent the event's callbacks continue; null when it was sealed without tracing. */
  traceparent?: string | null;
}

/**
 * Draining a subscription's backlog in order (delivery): the head events, the slice's lease, and
 * the records of successful and failed attempts. Filling the backlogs is DispatchStore's part.
 */
export class DeliveryStore {
  private readonly pool: pg.Pool;
  private readonly failingAfter: number;
  /**
   * `alertFailingAfter`: failed attempts of the head event after which the subscription is
   * failing and its owner is alerted (ALERT_FAILING_AFTER_ATTEMPTS, default 5).
   */
  constructor(pool: pg.Pool, opts: { alertFailingAfter?: number } = {}) {
    this.pool = pool;
    this.failingAfter = opts.alertFailingAfter ?? 5;
  }

  async subscription(id: string): Promise<SubscriptionRow | null> {
    const r = await this.pool.query<SubscriptionRow>(`SELECT ${ROW_COLUMNS} FROM subscriptions WHERE id = $1`, [id]);
    return r.rows[0] ?? null;
  }

  /** The next `limit` undelivered events of a subscription, in publish order, with their content. */
  async backlog(id: string, limit: number): Promise<BacklogItem[]> {
    const r = await this.pool.query<BacklogItem>(
      `SELECT b.height, b.idx, e.event_id AS "eventId", e.topic, e.content, e.extensions, e.ts AS "sealedAt", e.traceparent
       FROM subscription_backlog b
       JOIN subscriptions s ON s.id = b.subscription_id
       JOIN events e ON e.group_id = s.group_id AND e.height = b.height AND e.idx = b.idx
       WHERE b.subscription_id = $1 ORDER BY b.height, b.idx LIMIT $2`,
      [id, limit],
    );
    return r.rows.map((row) => ({ ...row, sealedAt: Number(row.sealedAt) }));
  }

  /**
   * Starts a delivery slice: takes the subscription's lease for `ms` (Postgres time) unless
   * another worker's lease is still running. The token fences every later write of this slice.
   * The same statement returns the row as the lease left it and its first undelivered events
   * (the slice's first batch): at most `read` and FIRST_READ_EVENTS, and past the first at most
   * FIRST_READ_BYTES of content, since the row is locked while they are read.
   */
  async lease(id: string, ms: number, read: number): Promise<LeaseResult> {
    const taken = await write.leased(this.pool, id, ms, { events: Math.min(read, FIRST_READ_EVENTS), bytes: FIRST_READ_BYTES });
    if (taken) {
      const { leaseToken, backlog, seen, ...row } = taken;
      const items: BacklogItem[] = backlog.map((e) => ({ ...e, content: Buffer.from(e.content, "base64") }));
      return { ok: true, token: leaseToken, row, backlog: items, more: seen > items.length };
    }
    // Not taken (the rare case): say why, and when to look again.
    const r = await this.pool.query<{ leftMs: number; live: boolean }>(
      `SELECT GREATEST(lease_until - ${PG_NOW_MS}, 0) AS "leftMs", active AND dead_at IS NULL AS live FROM subscriptions WHERE id = $1`,
      [id],
    );
    const row = r.rows[0];
    return { ok: false, retryInMs: row?.live ? row.leftMs : null };
  }

  /** Extends a held lease by `ms` from now; false when the token is no longer the current one. */
  renew(id: string, token: number, ms: number): Promise<boolean> {
    return write.renewed(this.pool, id, token, ms);
  }

  /** Ends a slice: the next one (on any notifier) may start at once. */
  release(id: string, token: number): Promise<void> {
    return write.released(this.pool, id, token);
  }

  /**
   * Records successful deliveries (in delivery order) in one statement (`delivered` in
   * subscription-lifecycle.ts), so one transaction: their
   * backlog rows go, the cursor moves to the last of them, the counters move by the rows actually
   * removed (an event recorded twice counts once), the head's retry state resets and the lease is
   * extended by `leaseMs`. A crash before it commits means these events are sent again (at least
   * once); after it, never again. Returns null (and records nothing) when the subscription is no
   * longer live or `token` is no longer its lease: another worker has taken over, and this one
   * must stop.
   *
   * Lock order, the same everywhere (subscribe, unsubscribe, delivery): the subscription row
   * first, then its backlog rows. Locking a backlog row first (a DELETE before the UPDATE) let an
   * unSubscribe holding the row and waiting for the backlog deadlock with this statement. Here
   * the DELETE is gated on `live`, whose row lock is therefore taken before any backlog row is
   * looked at, whatever plan Postgres picks. NO KEY UPDATE, the lock the UPDATE takes anyway,
   * does not block the dispatcher's backlog inserts (their foreign key takes KEY SHARE).
   */
  deliveredBatch(d: DeliveryBatch): Promise<SubscriptionStats | null> {
    return write.delivered(this.pool, d);
  }

  /**
   * A failed attempt at the head event; `deadAt` set means the subscription is suspended (retry
   * budget spent, 410 Gone, or failing for too long). `failingSince` is when this run of
   * failures began. The attempt, when given, goes to the delivery-attempt log in the same
   * statement. False when the subscription is no longer live or `token` no longer holds its
   * lease (nothing written).
   */
  failed(id: string, token: number, f: FailedAttempt): Promise<boolean> {
    if (!mayRaiseAlert(f.attempts, f.deadAt !== null, this.failingAfter)) return write.failed(this.pool, id, token, f);
    // An alert may be raised: stored with the failure, in its transaction (at least once).
    return inTransaction(this.pool, async (c) => {
      if (!(await write.failed(c, id, token, f))) return false;
      const now = f.deadAt ?? Date.now();
      const alert = {
        consecutiveFailures: f.attempts,
        dead: f.deadAt !== null,
        error: f.error,
        now,
        failingAfter: this.failingAfter,
        traceparent: f.traceparent,
      };
      await recordFailureAlert(c, id, alert);
      return true;
    });
  }

  /**
   * Refills one page (at most `pageEvents` events looked at) of a resumed subscription's missed
   * events into its backlog, under the slice's lease (extended by `leaseMs`). Null when the
   * subscription is no longer live or the lease was taken over. Runs outside the group's dispatch
   * lock: the dispatcher appends only events after the resume position, so both can run at once.
   */
  catchUp(id: string, token: number, leaseMs: number, pageEvents = CATCH_UP_PAGE): Promise<CatchUpResult | null> {
    return inTransaction(this.pool, async (c) => {
      const s = (
        await c.query<CatchUpState & { toHeight: number | null }>(
          `SELECT id, group_id AS "groupId", topic, match_rule AS "matchRule", catchup_height AS height, catchup_idx AS idx,
             catchup_seq AS seq, catchup_to_height AS "toHeight", catchup_to_idx AS "toIdx"
           FROM subscriptions WHERE id = $1 AND active AND lease_token = $2 FOR NO KEY UPDATE`,
          [id, token],
        )
      ).rows[0];
      if (!s) return null;
      const page = s.toHeight === null ? null : await catchUpPage(c, s as CatchUpState, pageEvents);
      const done = page === null || page.done;
      const stats = await write.refilled(c, id, {
        added: page?.added ?? 0,
        height: page?.height ?? s.height,
        idx: page?.idx ?? s.idx,
        seq: page?.seq ?? s.seq,
        done,
        leaseMs,
      });
      return { added: page?.added ?? 0, done, stats };
    });
  }

  /**
   * Live, not dead-lettered subscriptions with a backlog, a refill to do or a resend waiting (all,
   * or among `ids`): each needs a delivery job, due at the earliest of the head's next attempt
   * (when it has a backlog or refill) and its resends' next attempts.
   */
  async pending(ids?: readonly string[]): Promise<{ id: string; nextAttemptAt: number }[]> {
    const r = await this.pool.query<{ id: string; nextAttemptAt: number }>(
      `SELECT id, LEAST(CASE WHEN queued THEN head_at END, resend_at) AS "nextAttemptAt" FROM (
         SELECT s.id, s.next_attempt_at AS head_at,
           s.catchup_to_height IS NOT NULL OR EXISTS (SELECT 1 FROM subscription_backlog b WHERE b.subscription_id = s.id) AS queued,
           (SELECT min(r.next_attempt_at) FROM subscription_resends r WHERE r.subscription_id = s.id) AS resend_at
         FROM subscriptions s
         WHERE s.active AND s.dead_at IS NULL AND ($1::text[] IS NULL OR s.id = ANY($1::text[]))) p
       WHERE queued OR resend_at IS NOT NULL`,
      [ids ?? null],
    );
    return r.rows;
  }

  /** Counters of every live subscription, to re-copy into Redis after a restart. */
  async allStats(): Promise<SubscriptionStats[]> {
    const r = await this.pool.query<SubscriptionStats>(`SELECT ${STATS_COLUMNS} FROM subscriptions WHERE active`);
    return r.rows;
  }

  /**
   * The next `limit` undelivered events after position (height, idx), in order: a slice reads
   * ahead with it while the events it read before are still in flight or unrecorded.
   */
  async backlogAfter(id: string, height: number, idx: number, limit: number): Promise<BacklogItem[]> {
    const r = await this.pool.query<BacklogItem>(
      `SELECT b.height, b.idx, e.event_id AS "eventId", e.topic, e.content, e.extensions, e.ts AS "sealedAt", e.traceparent
       FROM subscription_backlog b
       JOIN subscriptions s ON s.id = b.subscription_id
       JOIN events e ON e.group_id = s.group_id AND e.height = b.height AND e.idx = b.idx
       WHERE b.subscription_id = $1 AND (b.height, b.idx) > ($2::bigint, $3::integer) ORDER BY b.height, b.idx LIMIT $4`,
      [id, height, idx, limit],
    );
    return r.rows.map((row) => ({ ...row, sealedAt: Number(row.sealedAt) }));
  }
}
