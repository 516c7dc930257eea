import type { MatchRule, SubscribeDecision } from "@evb/domain";
import type pg from "pg";
import { attemptColumns, type DeliveryAttempt, insertAttemptsSql } from "./delivery-attempt-store.ts";
import type { LedgerPosition } from "./ledger-position.ts";
import {
  COUNTER_COLUMNS,
  ROW_COLUMNS,
  STATS_COLUMNS,
  type SubscriptionCounters,
  type SubscriptionRow,
  type SubscriptionStats,
} from "./subscription-row.ts";

/**
 * The one home of a subscription's lifecycle: every statement that writes a `subscriptions` row
 * is here, named after the transition it makes (`TRANSITIONS` says, for each, what it sets, which
 * counters it moves and who makes it). The stores around it (SubscriptionStore, DispatchStore,
 * DeliveryStore) take the locks, read, decide and then call `write.<transition>`; no other file
 * writes the row (subscription-lifecycle.test.ts checks the sources). docs/delivery.md has the
 * same table for readers.
 */
export type Transition =
  // subscribe, unSubscribe and the dead-letter admin (SubscriptionStore, from the gateway)
  | "created"
  | "resumed"
  | "continued"
  | "unsubscribed"
  | "replayed"
  // the backlog grows (the notifier's dispatcher; a resumed subscription's refill)
  | "matched"
  | "refilled"
  // a delivery slice (DeliveryStore, from the notifier's delivery worker)
  | "leased"
  | "renewed"
  | "released"
  | "delivered"
  | "failed"
  | "dead";

/** How a transition moves each counter (`n`: the events it concerns; `now`: its time). */
export interface CounterEffect {
  delivered: "keep" | "zero" | "add";
  pending: "keep" | "zero" | "add" | "subtract";
  notifiedAt: "keep" | "clear" | "now";
  rev: "keep" | "bump";
}

export interface TransitionSpec {
  /** Who makes it: the store method, and who calls that. */
  by: string;
  /** What it means. */
  means: string;
  /** Whether the subscription becomes live (matched by the dispatcher) or ends. */
  live: "start" | "end" | "keep";
  /** Takes a new revision, so that the dispatchers' indexes reload the subscription. */
  rematch: boolean;
  /** The head event's retry state: reset (RESET_RETRY_STATE), a failed attempt recorded, or untouched. */
  retry: "reset" | "record" | "keep";
  /** The dead letter: released (RELEASE_DEAD_LETTER), set (delivery suspended) or untouched. */
  deadLetter: "release" | "set" | "keep";
  /**
   * The delivery slice's lease: taken (a new token), extended, ended (`lease_until` 0), revoked
   * (a new token no slice holds, and ended: a slice still running can record nothing more and
   * the next job leases at once), or untouched.
   */
  lease: "take" | "extend" | "end" | "revoke" | "keep";
  counters: CounterEffect;
}

const NO_COUNTERS: CounterEffect = { delivered: "keep", pending: "keep", notifiedAt: "keep", rev: "keep" };
const PENDING_ZERO: CounterEffect = { ...NO_COUNTERS, pending: "zero", rev: "bump" };
const PENDING_ADD: CounterEffect = { ...NO_COUNTERS, pending: "add", rev: "bump" };

export const TRANSITIONS: { readonly [T in Transition]: TransitionSpec } = {
  created: {
    by: "SubscriptionStore.subscribe ← gateway subscribe (no such id, or its owner takes the ended id for another topic)",
    means: "a new subscription, starting after the group's latest block; an old row under the id starts afresh",
    live: "start",
    rematch: true,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: { delivered: "zero", pending: "zero", notifiedAt: "clear", rev: "bump" },
  },
  resumed: {
    by: "SubscriptionStore.subscribe ← gateway subscribe (the owner takes its ended id back, same group and topic)",
    means: "live again after its last delivered event; what was missed is recorded to be refilled",
    live: "start",
    rematch: true,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: PENDING_ZERO,
  },
  continued: {
    by: "SubscriptionStore.subscribe ← gateway subscribe (the owner, live id, same group and topic)",
    means: "the URL is switched and a dead letter released",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  unsubscribed: {
    by: "SubscriptionStore.unsubscribe ← gateway unSubscribe",
    means: "ended: no more matching, backlog dropped; the row keeps its delivery cursor for a resume",
    live: "end",
    rematch: true,
    retry: "reset",
    deadLetter: "release",
    lease: "revoke",
    counters: PENDING_ZERO,
  },
  replayed: {
    by: "SubscriptionStore.replay ← gateway admin/replayDeadLetters",
    means: "a dead-lettered subscription's head gets a fresh retry budget; delivery resumes",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  matched: {
    by: "DispatchStore.run ← notifier dispatcher",
    means: "sealed events appended to the backlog (in the transaction that moves the group's cursor)",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "keep",
    counters: PENDING_ADD,
  },
  refilled: {
    by: "DeliveryStore.catchUp ← notifier delivery slice",
    means: "one page of a resumed subscription's missed events appended to the backlog; the refill ends with the last",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "extend",
    counters: PENDING_ADD,
  },
  leased: {
    by: "DeliveryStore.lease ← notifier delivery slice",
    means: "a delivery slice takes the row's lease (fencing token) unless another one's is running",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "take",
    counters: NO_COUNTERS,
  },
  renewed: {
    by: "DeliveryStore.renew ← notifier delivery slice",
    means: "the slice's lease extended",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "extend",
    counters: NO_COUNTERS,
  },
  released: {
    by: "DeliveryStore.release ← notifier delivery slice",
    means: "the slice ended: the next one may start at once",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "end",
    counters: NO_COUNTERS,
  },
  delivered: {
    by: "DeliveryStore.deliveredBatch (delivered) ← notifier delivery slice",
    means: "events delivered: their backlog rows go, the cursor moves to the last",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "keep",
    lease: "extend",
    counters: { delivered: "add", pending: "subtract", notifiedAt: "now", rev: "bump" },
  },
  failed: {
    by: "DeliveryStore.failed (deadAt null) ← notifier delivery slice",
    means: "a failed attempt at the head event, to be retried at nextAttemptAt",
    live: "keep",
    rematch: false,
    retry: "record",
    deadLetter: "keep",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  dead: {
    by: "DeliveryStore.failed (deadAt set) ← notifier delivery slice",
    means: "the last failed attempt: the head is dead-lettered and delivery suspended until a replay or continue",
    live: "keep",
    rematch: false,
    retry: "record",
    deadLetter: "set",
    lease: "keep",
    counters: NO_COUNTERS,
  },
};

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
const PG_NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * No slice holds the lease any more: a slice that read events before an unsubscribe must not
 * record them after it (nor after a resume that follows), or the cursor would pass events the
 * refill then adds again behind it.
 */
const REVOKE_LEASE = "lease_token = nextval('delivery_lease_tokens'), lease_until = 0";

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

// --- Pure decisions ---

/**
 * The counters after `t` (`n`: the events it concerns, as Postgres counted them; `now`: its
 * time): what the statements do to them, as a model for tests and readers.
 */
export function countersAfter(t: Transition, before: SubscriptionCounters, by: { n?: number; now?: number } = {}): SubscriptionCounters {
  const e = TRANSITIONS[t].counters;
  const n = by.n ?? 0;
  const delivered = e.delivered === "zero" ? 0 : e.delivered === "add" ? before.delivered + n : before.delivered;
  const pending =
    e.pending === "zero"
      ? 0
      : e.pending === "add"
        ? before.pending + n
        : e.pending === "subtract"
          ? Math.max(before.pending - n, 0)
          : before.pending;
  const notifiedAt = e.notifiedAt === "clear" ? null : e.notifiedAt === "now" ? (by.now ?? null) : before.notifiedAt;
  return { delivered, pending, notifiedAt, rev: e.rev === "bump" ? before.rev + 1 : before.rev };
}

/** Which transition a failed attempt makes: `deadAt` set suspends delivery. */
export function failureTransition(deadAt: number | null): "failed" | "dead" {
  return deadAt === null ? "failed" : "dead";
}

/** Which transition a subscribe decision makes; null when it leaves the row as it is. */
export function subscribeTransition(d: SubscribeDecision): "created" | "resumed" | "continued" | null {
  if (d.kind === "create") return "created";
  if (d.kind === "resume") return "resumed";
  if (d.kind === "continue" && d.switchUrl) return "continued";
  return null;
}

// --- The statements ---

/** What the statements run on: a pool, or a client inside a transaction. */
export interface Db {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** What `created` writes: the identity of the subscription and where it starts. */
export interface CreatedRow
  extends Pick<SubscriptionRow, "id" | "groupId" | "topic" | "matchRule" | "bodyVariant" | "url" | "nodeInstance" | "remoteIp" | "owner"> {
  now: number;
  startHeight: number;
  /** The delivery cursor's idx at `startHeight` (END_OF_BLOCK: nothing of that block is wanted). */
  startIdx: number;
}

/** What `resumed` writes. */
export interface ResumedRow {
  id: string;
  url: string;
  nodeInstance: string;
  remoteIp: string;
  matchRule: MatchRule;
  bodyVariant: MatchRule;
  startHeight: number;
  /** Refill the backlog from the delivery cursor up to here; null when nothing was missed. */
  catchUpTo: LedgerPosition | null;
}

/** A failed attempt (`deadAt` set: the last one, `dead`). */
export interface FailedAttempt {
  attempts: number;
  nextAttemptAt: number;
  error: string;
  deadAt: number | null;
  failingSince?: number;
  attempt?: DeliveryAttempt;
}

/** Successful deliveries of one slice, in delivery order, recorded together under its lease. */
export interface DeliveredEvents {
  id: string;
  token: number;
  events: readonly { height: number; idx: number }[];
  /** Attempts to add to the delivery-attempt log in the same statement (none: nothing logged). */
  attempts?: readonly DeliveryAttempt[];
  now: number;
  /** The lease is extended by this much (ms, Postgres time) with the record. */
  leaseMs: number;
}

/** A refill page's outcome for the row. */
export interface RefillStep {
  added: number;
  height: number;
  idx: number;
  seq: number | null;
  done: boolean;
  leaseMs: number;
}

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
  continued: `UPDATE subscriptions SET url = $2, ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER} WHERE id = $1 RETURNING ${ROW_COLUMNS}`,
  unsubscribed: `UPDATE subscriptions SET active = false, revision = ${NEW_REVISION}, ${countersSql(T.unsubscribed.counters)},
      ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER}, ${NO_REFILL}, ${REVOKE_LEASE}, unsubscribed_by = $2, unsubscribed_at = $3
    WHERE id = $1 AND active AND (NOT $4 OR owner = $2) RETURNING ${ROW_COLUMNS}`,
  replayed: `UPDATE subscriptions SET ${RESET_RETRY_STATE}, ${RELEASE_DEAD_LETTER}
    WHERE active AND dead_at IS NOT NULL AND ($1::text IS NULL OR id = $1) RETURNING id`,
  // pending_count moves by the rows really inserted: a row already in the backlog must not count twice.
  matched: `UPDATE subscriptions SET ${countersSql(T.matched.counters, { n: "u.n" })}
    FROM unnest($1::text[], $2::bigint[]) AS u(s, n) WHERE subscriptions.id = u.s
    RETURNING ${STATS_COLUMNS}`,
  refilled: `UPDATE subscriptions SET ${countersSql(T.refilled.counters, { n: "$2" })},
      catchup_height = $3, catchup_idx = $4, catchup_seq = $5,
      catchup_to_height = CASE WHEN $6 THEN NULL ELSE catchup_to_height END,
      catchup_to_idx = CASE WHEN $6 THEN NULL ELSE catchup_to_idx END,
      ${leaseFor("$7")}
    WHERE id = $1 RETURNING ${STATS_COLUMNS}`,
  // The condition is on the row itself, so of two workers racing here (each after the lease ran
  // out) the second re-checks the first's new lease and gets nothing.
  leased: `WITH taken AS (
      UPDATE subscriptions SET lease_token = nextval('delivery_lease_tokens'), ${leaseFor("$2")}
      WHERE id = $1 AND lease_until <= ${PG_NOW_MS} RETURNING lease_token)
    SELECT (SELECT lease_token FROM taken) AS token,
      (SELECT GREATEST(lease_until - ${PG_NOW_MS}, 0) FROM subscriptions WHERE id = $1) AS "leftMs"`,
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
    )
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

  /** `added`: backlog rows inserted per subscription id. */
  async matched(db: Db, added: ReadonlyMap<string, number>): Promise<SubscriptionStats[]> {
    if (added.size === 0) return [];
    const r = await db.query<SubscriptionStats>(SQL.matched, [[...added.keys()], [...added.values()]]);
    return r.rows;
  },

  refilled(db: Db, id: string, s: RefillStep): Promise<SubscriptionStats> {
    return one(db, SQL.refilled, [id, s.added, s.height, s.idx, s.seq, s.done, s.leaseMs]);
  },

  leased(db: Db, id: string, ms: number): Promise<{ token: number | null; leftMs: number | null }> {
    return one(db, SQL.leased, [id, ms]);
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
