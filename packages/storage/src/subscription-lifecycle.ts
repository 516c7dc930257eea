import type pg from "pg";
import type { MatchedRows } from "@evb/domain";
import { attemptColumns, insertAttemptsSql } from "./delivery-attempt-store.ts";
import { recoveredAlertSql } from "./owner-alert-store.ts";
import type { LedgerPosition } from "./ledger-position.ts";
import {
  COUNTER_COLUMNS,
  ROW_COLUMNS,
  STATS_COLUMNS,
  type SubscriptionCounters,
  type SubscriptionRow,
  type SubscriptionStats,
} from "./subscription-row.ts";
import { type CounterEffect, failureTransition, TRANSITIONS, type Transition } from "./subscription-transitions.ts";
import type {
  CreatedRow,
  Db,
  DeliveredEvents,
  FailedAttempt,
  LeasedRow,
  RefillStep,
  RestoredRow,
  ResumedRow,
} from "./subscription-writes.ts";

/**
 * The one home of a subscription's lifecycle: every statement that writes a `subscriptions` row
 * is here, named after the transition it makes (the transitions and what each does are in
 * subscription-transitions.ts). The stores around it (SubscriptionStore, DispatchStore,
 * DeliveryStore) take the locks, read, decide and then call `write.<transition>`; no other file
 * writes the row (subscription-lifecycle.test.ts checks the sources). docs/delivery.md has the
 * same table for readers.
 */

// --- Shared SQL fragments: one per concept, used by every statement that needs it. ---

/** The head event has no failed attempts: the retry state every fresh start, delivery and replay resets. */
export const RESET_RETRY_STATE = "attempts = 0, next_attempt_at = 0, last_error = NULL, failing_since = NULL";

/** Delivery is no longer suspended. */
export const RELEASE_DEAD_LETTER = "dead_at = NULL";

/** A new revision: the dispatchers' indexes reload the subscription (under the group's dispatch lock). */
export const NEW_REVISION = "nextval('subscription_revisions')";

/** No refill to do (or left to do). */
const NO_REFILL = "catchup_to_height = NULL, catchup_to_idx = NULL";

/** Postgres's clock in epoch ms: lease times are compared on one clock, whatever the notifiers' clocks say. */
export const PG_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * No slice holds the lease any more: a slice that read events before an unsubscribe must not
 * record them after it (nor after a resume that follows), or the cursor would pass events the
 * refill then adds again behind it.
 */
const REVOKE_LEASE = "lease_token = nextval('delivery_lease_tokens'), lease_until = 0";

/**
 * Appends backlog rows: the events at `heights` and `idxs` (array parameters) for subscription
 * `id` (one parameter) or for each of `ids` (an array parameter, in step with them). A row already
 * there is skipped, so callers count the rows inserted (RETURNING, rowCount), never those sent.
 * The dispatcher's pages, its last page (`matched`) and a resumed subscription's refill all
 * append through this one statement.
 */
export function insertBacklogSql(rows: { id: string } | { ids: string }, heights: string, idxs: string): string {
  const source =
    "ids" in rows
      ? `SELECT s, h, i FROM unnest(${rows.ids}::text[], ${heights}::bigint[], ${idxs}::int[]) AS rows_in(s, h, i)`
      : `SELECT ${rows.id}, h, i FROM unnest(${heights}::bigint[], ${idxs}::int[]) AS rows_in(h, i)`;
  return `INSERT INTO subscription_backlog (subscription_id, height, idx) ${source} ON CONFLICT DO NOTHING`;
}

/** The lease runs `ms` (a parameter) from now, Postgres time. */
function leaseFor(ms: string): string {
  return `lease_until = ${PG_NOW_MS} + ${ms}`;
}

/**
 * The counter assignments of `effect` (none for "keep"), `n` and `now` being SQL expressions and
 * `table` the name that qualifies the row's old values where the statement needs one.
 */
export function countersSql(effect: CounterEffect, at: { n?: string; now?: string; table?: string } = {}): string {
  const old = (k: keyof SubscriptionCounters) => (at.table ? `${at.table}.${COUNTER_COLUMNS[k]}` : COUNTER_COLUMNS[k]);
  const need = (what: string | undefined, name: string) => {
    if (what === undefined) throw new Error(`countersSql: ${name} is needed`);
    return what;
  };
  const set: string[] = [];
  const col = COUNTER_COLUMNS;
  if (effect.delivered === "zero") set.push(`${col.delivered} = 0`);
  if (effect.delivered === "add") set.push(`${col.delivered} = ${old("delivered")} + ${need(at.n, "n")}`);
  if (effect.pending === "zero") set.push(`${col.pending} = 0`);
  if (effect.pending === "add") set.push(`${col.pending} = ${old("pending")} + ${need(at.n, "n")}`);
  if (effect.pending === "subtract") set.push(`${col.pending} = GREATEST(${old("pending")} - ${need(at.n, "n")}, 0)`);
  if (effect.notifiedAt === "clear") set.push(`${col.notifiedAt} = NULL`);
  if (effect.notifiedAt === "now") set.push(`${col.notifiedAt} = ${need(at.now, "now")}`);
  if (effect.rev === "bump") set.push(`${col.rev} = ${old("rev")} + 1`);
  return set.join(", ");
}

// --- The statements ---

const T = TRANSITIONS;

/** The SQL of each transition (`dead` shares `failed`'s statement), for the stores and the tests. */
export const SQL: { readonly [K in Transition]: string } = {
  created: `INSERT INTO subscriptions (id, group_id, topic, match_rule, body_variant, url, node_instance, remote_ip, created_at, active,
      revision, start_height, delivered_height, delivered_idx, stats_rev, owner)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, true, ${NEW_REVISION}, $10, $10, $11, 1, $12)
    ON CONFLICT (id) DO UPDATE SET group_id = EXCLUDED.group_id, topic = EXCLUDED.topic, match_rule = EXCLUDED.match_rule,
      body_variant = EXCLUDED.body_variant, url = EXCLUDED.url, node_instance = EXCLUDED.node_instance,
      remote_ip = EXCLUDED.remote_ip, created_at = EXCLUDED.created_at, active = true, revision = EXCLUDED.revision,
      start_height = EXCLUDED.start_height, delivered_height = EXCLUDED.delivered_height, delivered_idx = EXCLUDED.delivered_idx,
      ${countersSql(T.created.counters, { table: "subscriptions" })}, ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER}, ${NO_REFILL}
    RETURNING ${ROW_COLUMNS}`,
  resumed: `UPDATE subscriptions SET active = true, revision = ${NEW_REVISION}, start_height = $2, url = $3,
      node_instance = $4, remote_ip = $5, match_rule = $6, body_variant = $7,
      ${countersSql(T.resumed.counters)}, ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER},
      catchup_height = delivered_height, catchup_idx = delivered_idx, catchup_seq = NULL, catchup_to_height = $8, catchup_to_idx = $9
    WHERE id = $1 RETURNING ${ROW_COLUMNS}`,
  // A fresh row (its retry state, dead letter and lease take their defaults); a row already there
  // (the gateway took the id again on the new ledger first) is left as it is: null comes back.
  restored: `INSERT INTO subscriptions (id, group_id, topic, match_rule, body_variant, url, node_instance, remote_ip, interface_type,
      created_at, active, revision, start_height, delivered_height, delivered_idx, delivered_count, stats_rev, owner,
      unsubscribed_by, unsubscribed_at, catchup_height, catchup_idx, catchup_to_height, catchup_to_idx)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, ${NEW_REVISION}, $12, $13, $14, $15, 1, $16, $17, $18, $13, $14, $19, $20)
    ON CONFLICT (id) DO NOTHING RETURNING ${ROW_COLUMNS}`,
  continued: `UPDATE subscriptions SET url = $2, ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER} WHERE id = $1 RETURNING ${ROW_COLUMNS}`,
  unsubscribed: `UPDATE subscriptions SET active = false, revision = ${NEW_REVISION}, ${countersSql(T.unsubscribed.counters)},
      ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER}, ${NO_REFILL}, ${REVOKE_LEASE}, unsubscribed_by = $2, unsubscribed_at = $3
    WHERE id = $1 AND active AND (NOT $4 OR owner = $2) RETURNING ${ROW_COLUMNS}`,
  replayed: `UPDATE subscriptions SET ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER}
    WHERE active AND dead_at IS NOT NULL AND ($1::text IS NULL OR id = $1) RETURNING id`,
  // Under the group's dispatch lock, like resumed: the refill covers (cursor, dispatch position];
  // the dispatcher appends what comes after. The lease is revoked so that a slice still running
  // records nothing (its record would move the cursor forward past the replay).
  rewound: `UPDATE subscriptions SET delivered_height = $2, delivered_idx = $3, ${countersSql(T.rewound.counters)},
      ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER}, ${REVOKE_LEASE},
      catchup_height = $2, catchup_idx = $3, catchup_seq = NULL, catchup_to_height = $4, catchup_to_idx = $5
    WHERE id = $1 AND active RETURNING ${ROW_COLUMNS}`,
  // One statement of the dispatcher: appends a page of backlog rows ($1–$3), moves the group's
  // dispatch cursor ($6–$8) and moves pending_count by the rows really inserted, in this page and
  // in earlier pages of the run ($4, $5): a row already in the backlog must not count twice.
  matched: `WITH ins AS (${insertBacklogSql({ ids: "$1" }, "$2", "$3")} RETURNING subscription_id),
    u AS (SELECT s, sum(n)::bigint AS n FROM (SELECT subscription_id, 1::bigint FROM ins
      UNION ALL SELECT * FROM unnest($4::text[], $5::bigint[])) AS a(s, n) GROUP BY s),
    moved AS (UPDATE dispatch_cursors SET height = $7, idx = $8 WHERE group_id = $6)
    UPDATE subscriptions SET ${countersSql(T.matched.counters, { n: "u.n" })}
    FROM u WHERE subscriptions.id = u.s
    RETURNING ${STATS_COLUMNS}`,
  refilled: `UPDATE subscriptions SET ${countersSql(T.refilled.counters, { n: "$2" })},
      catchup_height = $3, catchup_idx = $4, catchup_seq = $5,
      catchup_to_height = CASE WHEN $6 THEN NULL ELSE catchup_to_height END,
      catchup_to_idx = CASE WHEN $6 THEN NULL ELSE catchup_to_idx END,
      ${leaseFor("$7")}
    WHERE id = $1 RETURNING ${STATS_COLUMNS}`,
  // The condition is on the row itself, so of two workers racing here (each after the lease ran
  // out) the second re-checks the first's new lease and gets nothing.
  // Only a live subscription is leased. RETURNING gives the row as this UPDATE left it: the
  // version it locked, so the retry state written by a slice that held the lease until just now
  // is in it even when this statement waited for that slice's commit.
  // The statement also reads the first backlog events: at most $3, and no more content than $4
  // bytes past the first (the row stays locked until the statement ends, and a dispatch run
  // touching the subscription waits for it), only those after the delivery cursor the UPDATE
  // returns, since the read's snapshot may predate a delivery record this UPDATE waited for
  // (rows at or below that cursor were deleted by it). `seen` counts the rows looked at (one
  // more than $3 when there are), so the slice knows whether it got all there was.
  leased: `WITH l AS (
      UPDATE subscriptions SET lease_token = nextval('delivery_lease_tokens'), ${leaseFor("$2")}
      WHERE id = $1 AND active AND dead_at IS NULL AND lease_until <= ${PG_NOW_MS}
      RETURNING lease_token AS "leaseToken", ${ROW_COLUMNS}, group_id AS g, delivered_height AS dh, delivered_idx AS di),
    k AS (SELECT b.height, b.idx FROM subscription_backlog b, l
      WHERE b.subscription_id = $1 AND (b.height, b.idx) > (l.dh, l.di) ORDER BY b.height, b.idx LIMIT $3 + 1),
    r AS (SELECT k.height, k.idx, e.event_id, e.topic, e.content, e.extensions, e.ts, e.traceparent,
        row_number() OVER w AS n, sum(octet_length(e.content)) OVER w - octet_length(e.content) AS before
      FROM k JOIN l ON true JOIN events e ON e.group_id = l.g AND e.height = k.height AND e.idx = k.idx
      WINDOW w AS (ORDER BY k.height, k.idx))
    SELECT l.*, (SELECT count(*)::int FROM k) AS seen,
      (SELECT COALESCE(json_agg(json_build_object('height', r.height, 'idx', r.idx, 'eventId', r.event_id, 'topic', r.topic,
        'content', encode(r.content, 'base64'), 'extensions', r.extensions, 'sealedAt', r.ts, 'traceparent', r.traceparent)
        ORDER BY r.height, r.idx), '[]') FROM r WHERE r.n <= $3 AND (r.n = 1 OR r.before < $4)) AS backlog
    FROM l`,
  renewed: `UPDATE subscriptions SET ${leaseFor("$3")} WHERE id = $1 AND lease_token = $2`,
  released: "UPDATE subscriptions SET lease_until = 0 WHERE id = $1 AND lease_token = $2",
  // Lock order, the same everywhere (subscribe, unsubscribe, delivery): the subscription row
  // first, then its backlog rows. The DELETE is gated on `live`, whose row lock is therefore
  // taken before any backlog row is looked at, whatever plan Postgres picks. NO KEY UPDATE, the
  // lock the UPDATE takes anyway, does not block the dispatcher's backlog inserts (their foreign
  // key takes KEY SHARE).
  delivered: `WITH live AS (
      SELECT id AS live_id FROM subscriptions WHERE id = $1 AND active AND lease_token = $2 FOR NO KEY UPDATE
    ), gone AS (
      DELETE FROM subscription_backlog b
      WHERE EXISTS (SELECT 1 FROM live) AND b.subscription_id = $1
        AND (b.height, b.idx) IN (SELECT * FROM unnest($3::bigint[], $4::integer[]))
      RETURNING 1
    ), logged AS (
      ${insertAttemptsSql("$1", 9)} AND EXISTS (SELECT 1 FROM live)
    ), ${recoveredAlertSql("$7", "$15")}
    UPDATE subscriptions s SET
      ${countersSql(T.delivered.counters, { n: "removed.n_gone", now: "$7", table: "s" })},
      delivered_height = CASE WHEN (s.delivered_height, s.delivered_idx) < ($5, $6) THEN $5 ELSE s.delivered_height END,
      delivered_idx = CASE WHEN (s.delivered_height, s.delivered_idx) < ($5, $6) THEN $6 ELSE s.delivered_idx END,
      ${RESET_RETRY_STATE}, ${leaseFor("$8")}
    FROM live, (SELECT count(*)::bigint AS n_gone FROM gone) removed
    WHERE s.id = live.live_id
    RETURNING ${STATS_COLUMNS}`,
  failed: failedSql(),
  dead: failedSql(),
};

function failedSql(): string {
  return `WITH live AS (
      UPDATE subscriptions SET attempts = $3, next_attempt_at = $4, last_error = $5, dead_at = $6,
        failing_since = coalesce($7::bigint, failing_since)
      WHERE id = $1 AND active AND lease_token = $2 RETURNING 1
    ), logged AS (
      ${insertAttemptsSql("$1", 8)} AND EXISTS (SELECT 1 FROM live)
    )
    SELECT count(*)::int AS n FROM live`;
}

async function one<R extends pg.QueryResultRow>(db: Db, sql: string, params: unknown[]): Promise<R> {
  return (await db.query<R>(sql, params)).rows[0] as R;
}

/**
 * The transitions' writes, one function each (`failed` makes `dead` when `deadAt` is set). Each
 * runs its statement on `db`: the callers hold whatever locks the transition needs first (the
 * group's dispatch lock for created, resumed, unsubscribed and matched; the row for refilled).
 */

export const write = {
  created(db: Db, r: CreatedRow): Promise<SubscriptionRow> {
    return one(db, SQL.created, [
      r.id,
      r.groupId,
      r.topic,
      r.matchRule,
      r.bodyVariant,
      r.url,
      r.nodeInstance,
      r.remoteIp,
      r.now,
      r.startHeight,
      r.startIdx,
      r.owner,
    ]);
  },

  resumed(db: Db, r: ResumedRow): Promise<SubscriptionRow> {
    return one(db, SQL.resumed, [
      r.id,
      r.startHeight,
      r.url,
      r.nodeInstance,
      r.remoteIp,
      r.matchRule,
      r.bodyVariant,
      r.catchUpTo?.height ?? null,
      r.catchUpTo?.idx ?? null,
    ]);
  },

  /** Null when the id already has a row. */
  async restored(db: Db, r: RestoredRow): Promise<SubscriptionRow | null> {
    const res = await db.query<SubscriptionRow>(SQL.restored, [
      r.id,
      r.groupId,
      r.topic,
      r.matchRule,
      r.bodyVariant,
      r.url,
      r.nodeInstance,
      r.remoteIp,
      r.interfaceType,
      r.createdAt,
      r.active,
      r.startHeight,
      r.delivered.height,
      r.delivered.idx,
      r.deliveredCount,
      r.owner,
      r.unsubscribedBy,
      r.unsubscribedAt,
      r.catchUpTo?.height ?? null,
      r.catchUpTo?.idx ?? null,
    ]);
    return res.rows[0] ?? null;
  },

  continued(db: Db, id: string, url: string): Promise<SubscriptionRow> {
    return one(db, SQL.continued, [id, url]);
  },

  /** Null when the id is not live (or, with `ownerOnly`, not the caller's). */
  async unsubscribed(db: Db, id: string, by: { caller: string; ownerOnly: boolean; now: number }): Promise<SubscriptionRow | null> {
    const r = await db.query<SubscriptionRow>(SQL.unsubscribed, [id, by.caller, by.now, by.ownerOnly]);
    return r.rows[0] ?? null;
  },

  /** The ids released. */
  async replayed(db: Db, id: string | null): Promise<string[]> {
    const r = await db.query<{ id: string }>(SQL.replayed, [id]);
    return r.rows.map((x) => x.id);
  },

  /** Null when the id is not live. The caller has dropped the backlog (under the group's dispatch lock). */
  async rewound(db: Db, id: string, to: LedgerPosition, catchUpTo: LedgerPosition | null): Promise<SubscriptionRow | null> {
    const r = await db.query<SubscriptionRow>(SQL.rewound, [id, to.height, to.idx, catchUpTo?.height ?? null, catchUpTo?.idx ?? null]);
    return r.rows[0] ?? null;
  },

  /**
   * The last statement of a dispatch run (under the group's dispatch lock): appends `page` to the
   * backlogs, moves the cursor of `groupId` to `to`, and counts what was inserted, here and in
   * earlier pages of the run (`inserted`: rows per subscription id).
   */
  async matched(
    db: Db,
    m: { page: MatchedRows; inserted: ReadonlyMap<string, number>; groupId: string; to: LedgerPosition },
  ): Promise<SubscriptionStats[]> {
    const r = await db.query<SubscriptionStats>(SQL.matched, [
      m.page.subs,
      m.page.heights,
      m.page.idxs,
      [...m.inserted.keys()],
      [...m.inserted.values()],
      m.groupId,
      m.to.height,
      m.to.idx,
    ]);
    return r.rows;
  },

  refilled(db: Db, id: string, s: RefillStep): Promise<SubscriptionStats> {
    return one(db, SQL.refilled, [id, s.added, s.height, s.idx, s.seq, s.done, s.leaseMs]);
  },

  /**
   * The row with its new lease token and its first backlog events (`LeasedEvent`s: at most
   * `read.events`, and past the first no more than `read.bytes` of content) with `seen`, the
   * rows looked at (`read.events` + 1 at most); null when it is not live or another lease still runs.
   */
  async leased(db: Db, id: string, ms: number, read: { events: number; bytes: number }): Promise<LeasedRow | null> {
    const r = await db.query<LeasedRow & { g: string; dh: number; di: number }>(SQL.leased, [id, ms, read.events, read.bytes]);
    const row = r.rows[0];
    if (!row) return null;
    const { g: _g, dh: _dh, di: _di, ...leased } = row;
    return leased;
  },

  /** False when `token` no longer holds the lease. */
  async renewed(db: Db, id: string, token: number, ms: number): Promise<boolean> {
    return (await db.query(SQL.renewed, [id, token, ms])).rowCount === 1;
  },

  async released(db: Db, id: string, token: number): Promise<void> {
    await db.query(SQL.released, [id, token]);
  },

  /** Null (nothing written) when the subscription is no longer live or `token` no longer holds its lease. */
  async delivered(db: Db, d: DeliveredEvents): Promise<SubscriptionStats | null> {
    const last = d.events[d.events.length - 1];
    if (!last) throw new Error("deliveredBatch needs at least one event");
    const r = await db.query<SubscriptionStats>(SQL.delivered, [
      d.id,
      d.token,
      d.events.map((e) => e.height),
      d.events.map((e) => e.idx),
      last.height,
      last.idx,
      d.now,
      d.leaseMs,
      ...attemptColumns(d.attempts ?? []),
      d.traceparent ?? null,
    ]);
    return r.rows[0] ?? null;
  },

  /** False (nothing written) when the subscription is no longer live or `token` no longer holds its lease. */
  async failed(db: Db, id: string, token: number, f: FailedAttempt): Promise<boolean> {
    const r = await db.query<{ n: number }>(SQL[failureTransition(f.deadAt)], [
      id,
      token,
      f.attempts,
      f.nextAttemptAt,
      f.error.slice(0, 500),
      f.deadAt,
      f.failingSince ?? null,
      ...attemptColumns(f.attempt ? [f.attempt] : []),
    ]);
    return r.rows[0]?.n === 1;
  },
};
