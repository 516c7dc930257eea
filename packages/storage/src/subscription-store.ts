import type pg from "pg";
import { decideSubscribe, type MatchRule } from "@evb/domain";
import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
import { inTransaction } from "./pool.ts";
import { createdStartHeight, resumedStart } from "./subscription-start.ts";

export interface SubscriptionRow {
  id: string;
  groupId: string;
  topic: string;
  matchRule: MatchRule;
  bodyVariant: MatchRule;
  url: string;
  nodeInstance: string;
  remoteIp: string;
  /** Who may switch its URL: the creating caller's address, or `key:<id>` of its API key. */
  owner: string;
  interfaceType: string;
  createdAt: number;
  active: boolean;
  deliveredCount: number;
  pendingCount: number;
  notifiedAt: number | null;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  deadAt: number | null;
  statsRev: number;
  /** A resumed subscription whose missed events are still being refilled into its backlog. */
  catchingUp: boolean;
  /** Epoch ms when the current run of failed attempts began (meaningful while attempts > 0). */
  failingSince: number | null;
}

/** The counters mirrored to Redis for admin/listSubscription; `rev` orders concurrent copies. */
export interface SubscriptionStats {
  id: string;
  nodeInstance: string;
  delivered: number;
  pending: number;
  notifiedAt: number | null;
  createdAt: number;
  rev: number;
}

/** What subscribe asks for: the row's identity fields, and the time of the request. */
export type SubscribeRequest = Pick<
  SubscriptionRow,
  "id" | "groupId" | "topic" | "matchRule" | "bodyVariant" | "url" | "nodeInstance" | "remoteIp" | "owner"
> & { now: number };

/**
 * What subscribe did, as decideSubscribe (packages/domain) chose under the row lock.
 * created: a new subscription starting after the group's latest block. resumed: the owner took
 * its ended id back with the same group and topic: the backlog is refilled from the ledger after
 * the last delivered event (by the delivery job, `row.catchingUp` until done). continued: the id
 * is live and the owner asked; the URL is switched and a dead-lettered subscription is released.
 * kept: the id is live and someone else asked; nothing changed (the old URL stays). declined: the
 * id is ended and someone other than its owner asked; nothing changed (it stays ended, owned by
 * its owner, with its resume position). mismatch: the id is live with another group or topic.
 */
export type SubscribeOutcome = {
  kind: "created" | "resumed" | "continued" | "kept" | "declined" | "mismatch";
  row: SubscriptionRow;
};

export const ROW_COLUMNS = `id, group_id AS "groupId", topic, match_rule AS "matchRule", body_variant AS "bodyVariant", url,
  node_instance AS "nodeInstance", remote_ip AS "remoteIp", owner, interface_type AS "interfaceType", created_at AS "createdAt",
  active, delivered_count AS "deliveredCount", pending_count AS "pendingCount", notified_at AS "notifiedAt", attempts,
  next_attempt_at AS "nextAttemptAt", last_error AS "lastError", dead_at AS "deadAt", stats_rev AS "statsRev",
  catchup_to_height IS NOT NULL AS "catchingUp", failing_since AS "failingSince"`;

export const STATS_COLUMNS = `id, node_instance AS "nodeInstance", delivered_count AS "delivered", pending_count AS "pending",
  notified_at AS "notifiedAt", created_at AS "createdAt", stats_rev AS "rev"`;

/** A row's counters in the vocabulary of SubscriptionStats (what STATS_COLUMNS selects). */
export function statsOfRow(row: SubscriptionRow): SubscriptionStats {
  return {
    id: row.id,
    nodeInstance: row.nodeInstance,
    delivered: row.deliveredCount,
    pending: row.pendingCount,
    notifiedAt: row.notifiedAt,
    createdAt: row.createdAt,
    rev: row.statsRev,
  };
}

/** Who ends a subscription: recorded on the row; with `ownerOnly`, only the owner may. */
export interface UnsubscribeBy {
  caller: string;
  ownerOnly: boolean;
  now: number;
}

/**
 * Takes the group's dispatch lock (creating the cursor at the chain head when the group has none
 * yet) and returns the position up to which every event has been dispatched (idx END_OF_BLOCK:
 * the whole block). Subscription changes and dispatch runs of one group are serialised by this
 * lock: a change committed before a dispatch run is seen by it, and one committed after starts
 * above the events that run covered.
 */
export async function lockDispatchCursor(c: pg.PoolClient, groupId: string): Promise<LedgerPosition> {
  await c.query(
    `INSERT INTO dispatch_cursors (group_id, height)
     SELECT $1, COALESCE((SELECT height FROM chain_heads WHERE group_id = $1), 0) ON CONFLICT DO NOTHING`,
    [groupId],
  );
  const r = await c.query<LedgerPosition>("SELECT height, idx FROM dispatch_cursors WHERE group_id = $1 FOR UPDATE", [groupId]);
  return r.rows[0] as LedgerPosition;
}

/** Subscriptions as the gateway sees them: subscribe, unSubscribe, listSubscription, dead letters. */
export class SubscriptionStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async get(id: string): Promise<SubscriptionRow | null> {
    const r = await this.pool.query<SubscriptionRow>(`SELECT ${ROW_COLUMNS} FROM subscriptions WHERE id = $1`, [id]);
    return r.rows[0] ?? null;
  }

  subscribe(req: SubscribeRequest): Promise<SubscribeOutcome> {
    return inTransaction(this.pool, async (c) => {
      const dispatched = await lockDispatchCursor(c, req.groupId);
      const existing = (await c.query<SubscriptionRow>(`SELECT ${ROW_COLUMNS} FROM subscriptions WHERE id = $1 FOR UPDATE`, [req.id]))
        .rows[0];
      const decision = decideSubscribe(existing ?? null, req);
      if (existing && decision.kind === "mismatch") return { kind: "mismatch", row: existing };
      if (existing && decision.kind === "continue" && !decision.switchUrl) return { kind: "kept", row: existing };
      if (existing && decision.kind === "decline") return { kind: "declined", row: existing };
      if (decision.kind === "continue") {
        const row = await one(
          c,
          `UPDATE subscriptions SET url = $2, dead_at = NULL, attempts = 0, next_attempt_at = 0, last_error = NULL
           WHERE id = $1 RETURNING ${ROW_COLUMNS}`,
          [req.id, req.url],
        );
        return { kind: "continued", row };
      }
      if (decision.kind === "resume") {
        const cursor = (
          await c.query<{ h: number; i: number }>("SELECT delivered_height AS h, delivered_idx AS i FROM subscriptions WHERE id = $1", [
            req.id,
          ])
        ).rows[0] as { h: number; i: number };
        await c.query("DELETE FROM subscription_backlog WHERE subscription_id = $1", [req.id]);
        // What was published between the cursor and `dispatched` is only recorded here; the
        // delivery job refills it in pages (DeliveryStore.catchUp), so this transaction, and the
        // group's lock, stay short.
        const { startHeight, catchUpTo } = resumedStart(dispatched, { height: cursor.h, idx: cursor.i });
        const row = await one(
          c,
          `UPDATE subscriptions SET active = true, revision = nextval('subscription_revisions'), start_height = $2, url = $3,
             node_instance = $4, remote_ip = $5, match_rule = $6, body_variant = $7, pending_count = 0, attempts = 0,
             next_attempt_at = 0, last_error = NULL, dead_at = NULL, stats_rev = stats_rev + 1,
             catchup_height = delivered_height, catchup_idx = delivered_idx, catchup_seq = NULL,
             catchup_to_height = $8, catchup_to_idx = $9
           WHERE id = $1 RETURNING ${ROW_COLUMNS}`,
          [
            req.id,
            startHeight,
            req.url,
            req.nodeInstance,
            req.remoteIp,
            req.matchRule,
            req.bodyVariant,
            catchUpTo?.height ?? null,
            catchUpTo?.idx ?? null,
          ],
        );
        return { kind: "resumed", row };
      }
      // New (or the owner's ended id taken for another topic or group): start after the latest block. The
      // head is read after the lock, so it is at or above every height already dispatched.
      const head = (await c.query<{ height: number }>("SELECT height FROM chain_heads WHERE group_id = $1", [req.groupId])).rows[0];
      const start = createdStartHeight(head?.height ?? 0, dispatched);
      await c.query("DELETE FROM subscription_backlog WHERE subscription_id = $1", [req.id]);
      const row = await one(
        c,
        `INSERT INTO subscriptions (id, group_id, topic, match_rule, body_variant, url, node_instance, remote_ip, created_at, active,
           revision, start_height, delivered_height, delivered_idx, stats_rev, owner)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, true, nextval('subscription_revisions'), $10, $10, $11, 1, $12)
         ON CONFLICT (id) DO UPDATE SET group_id = EXCLUDED.group_id, topic = EXCLUDED.topic, match_rule = EXCLUDED.match_rule,
           body_variant = EXCLUDED.body_variant, url = EXCLUDED.url, node_instance = EXCLUDED.node_instance,
           remote_ip = EXCLUDED.remote_ip, created_at = EXCLUDED.created_at, active = true, revision = EXCLUDED.revision,
           start_height = EXCLUDED.start_height, delivered_height = EXCLUDED.delivered_height, delivered_idx = EXCLUDED.delivered_idx,
           delivered_count = 0, pending_count = 0, notified_at = NULL, attempts = 0, next_attempt_at = 0, last_error = NULL,
           dead_at = NULL, stats_rev = subscriptions.stats_rev + 1, catchup_to_height = NULL, catchup_to_idx = NULL
         RETURNING ${ROW_COLUMNS}`,
        [
          req.id,
          req.groupId,
          req.topic,
          req.matchRule,
          req.bodyVariant,
          req.url,
          req.nodeInstance,
          req.remoteIp,
          req.now,
          start,
          END_OF_BLOCK,
          req.owner,
        ],
      );
      return { kind: "created", row };
    });
  }

  /**
   * Ends a live subscription: no more matching, its backlog dropped. The row stays (inactive) with
   * its delivery cursor, so that a later subscribe with the same id resumes after the last
   * delivered event. Returns null when the id is not live. Locks the row before its backlog, in
   * the order delivery records take them (see DeliveryStore.delivered). `by` is who asks (an
   * address or `key:<id>`), recorded on the row; with `ownerOnly` (API keys on) a subscription
   * owned by someone else is treated as not live.
   */
  async unsubscribe(id: string, by: UnsubscribeBy = { caller: "", ownerOnly: false, now: Date.now() }): Promise<SubscriptionRow | null> {
    const live = (
      await this.pool.query<{ groupId: string; owner: string }>(
        'SELECT group_id AS "groupId", owner FROM subscriptions WHERE id = $1 AND active',
        [id],
      )
    ).rows[0];
    if (!live || (by.ownerOnly && live.owner !== by.caller)) return null;
    return inTransaction(this.pool, async (c) => {
      await lockDispatchCursor(c, live.groupId);
      const r = await c.query<SubscriptionRow>(
        `UPDATE subscriptions SET active = false, revision = nextval('subscription_revisions'), pending_count = 0, attempts = 0,
           next_attempt_at = 0, dead_at = NULL, stats_rev = stats_rev + 1, catchup_to_height = NULL, catchup_to_idx = NULL,
           unsubscribed_by = $2, unsubscribed_at = $3
         WHERE id = $1 AND active AND (NOT $4 OR owner = $2) RETURNING ${ROW_COLUMNS}`,
        [id, by.caller, by.now, by.ownerOnly],
      );
      if (r.rows.length === 0) return null;
      await c.query("INSERT INTO subscription_endings (subscription_id, owner, ended_by, ended_at) VALUES ($1, $2, $3, $4)", [
        id,
        (r.rows[0] as SubscriptionRow).owner,
        by.caller,
        by.now,
      ]);
      await c.query("DELETE FROM subscription_backlog WHERE subscription_id = $1", [id]);
      return r.rows[0] as SubscriptionRow;
    });
  }

  /** Live subscriptions of one group owned by the given node instances (all nodes when null). */
  async listLive(groupId: string, nodes: readonly string[] | null): Promise<SubscriptionRow[]> {
    const r =
      nodes === null
        ? await this.pool.query<SubscriptionRow>(
            `SELECT ${ROW_COLUMNS} FROM subscriptions WHERE active AND group_id = $1 ORDER BY created_at, id`,
            [groupId],
          )
        : await this.pool.query<SubscriptionRow>(
            `SELECT ${ROW_COLUMNS} FROM subscriptions WHERE active AND group_id = $1 AND node_instance = ANY($2::text[]) ORDER BY created_at, id`,
            [groupId, nodes],
          );
    return r.rows;
  }

  /** Live subscriptions whose head event exhausted its retries (delivery suspended), oldest first. */
  async deadLettered(groupId: string | null): Promise<SubscriptionRow[]> {
    const r = await this.pool.query<SubscriptionRow>(
      `SELECT ${ROW_COLUMNS} FROM subscriptions WHERE active AND dead_at IS NOT NULL AND ($1::text IS NULL OR group_id = $1)
       ORDER BY dead_at, id`,
      [groupId],
    );
    return r.rows;
  }

  /**
   * Releases dead-lettered subscriptions (one, or all when `id` is null): the head event gets a
   * fresh retry budget and delivery resumes with it, so the backlog still drains in order.
   */
  async replay(id: string | null): Promise<string[]> {
    const r = await this.pool.query<{ id: string }>(
      `UPDATE subscriptions SET dead_at = NULL, attempts = 0, next_attempt_at = 0
       WHERE active AND dead_at IS NOT NULL AND ($1::text IS NULL OR id = $1) RETURNING id`,
      [id],
    );
    return r.rows.map((x) => x.id);
  }
}

async function one(c: pg.PoolClient, sql: string, params: unknown[]): Promise<SubscriptionRow> {
  return (await c.query<SubscriptionRow>(sql, params)).rows[0] as SubscriptionRow;
}
