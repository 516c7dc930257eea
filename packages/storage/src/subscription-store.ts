import type pg from "pg";
import { decideSubscribe } from "@evb/domain";
import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
import { inTransaction } from "./pool.ts";
import { write } from "./subscription-lifecycle.ts";
import { subscribeTransition } from "./subscription-transitions.ts";
import { ROW_COLUMNS, type SubscriptionRow } from "./subscription-row.ts";
import { createdStartHeight, resumedStart, rewoundStart } from "./subscription-start.ts";

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
export type SubscribeOutcome =
  | {
      kind: "created" | "resumed" | "continued" | "kept" | "declined" | "mismatch";
      row: SubscriptionRow;
    }
  /** A new live subscription (created or resumed) would take the owner past `maxPerOwner`; nothing changed. */
  | { kind: "over-limit"; live: number };

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
  const lock = "SELECT height, idx FROM dispatch_cursors WHERE group_id = $1 FOR UPDATE";
  // One round trip once the cursor exists (every run but the group's first).
  const found = await c.query<LedgerPosition>(lock, [groupId]);
  if (found.rows[0]) return found.rows[0];
  await c.query(
    `INSERT INTO dispatch_cursors (group_id, height)
     SELECT $1, COALESCE((SELECT height FROM chain_heads WHERE group_id = $1), 0) ON CONFLICT DO NOTHING`,
    [groupId],
  );
  const r = await c.query<LedgerPosition>(lock, [groupId]);
  return r.rows[0] as LedgerPosition;
}

/**
 * The owner's live subscriptions, read under a transaction-scoped lock of that owner: one row the
 * triggers of migration 028 keep, not a count over the owner's subscriptions (this runs under the
 * group's dispatch lock).
 */
async function liveOf(c: pg.PoolClient, owner: string): Promise<number> {
  await c.query("SELECT pg_advisory_xact_lock(hashtext('evb.subscription-owner'), hashtext($1))", [owner]);
  const r = await c.query<{ n: number }>("SELECT live AS n FROM subscription_owner_live WHERE owner = $1", [owner]);
  return r.rows[0]?.n ?? 0;
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

  /**
   * `maxPerOwner` caps the owner's live subscriptions: a subscribe that would add one more live
   * subscription (created, or resumed from ended) past it answers "over-limit". The count is
   * taken under a transaction lock per owner, so concurrent subscribes cannot pass it together.
   */
  subscribe(req: SubscribeRequest, maxPerOwner = Number.POSITIVE_INFINITY): Promise<SubscribeOutcome> {
    return inTransaction(this.pool, async (c) => {
      const dispatched = await lockDispatchCursor(c, req.groupId);
      const existing = (await c.query<SubscriptionRow>(`SELECT ${ROW_COLUMNS} FROM subscriptions WHERE id = $1 FOR UPDATE`, [req.id]))
        .rows[0];
      const decision = decideSubscribe(existing ?? null, req);
      const transition = subscribeTransition(decision);
      if (existing && transition === null) {
        return { kind: decision.kind === "mismatch" ? "mismatch" : decision.kind === "decline" ? "declined" : "kept", row: existing };
      }
      if (transition === "continued") return { kind: "continued", row: await write.continued(c, req.id, req.url) };
      // Taken after the row lock and the group's lock, as every subscribe takes them, so the order stays one.
      const live = await liveOf(c, req.owner);
      if (live >= maxPerOwner) return { kind: "over-limit", live };
      if (transition === "resumed") {
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
        return { kind: "resumed", row: await write.resumed(c, { ...req, startHeight, catchUpTo }) };
      }
      // New (or the owner's ended id taken for another topic or group): start after the latest block. The
      // head is read after the lock, so it is at or above every height already dispatched.
      const head = (await c.query<{ height: number }>("SELECT height FROM chain_heads WHERE group_id = $1", [req.groupId])).rows[0];
      const startHeight = createdStartHeight(head?.height ?? 0, dispatched);
      await c.query("DELETE FROM subscription_backlog WHERE subscription_id = $1", [req.id]);
      return { kind: "created", row: await write.created(c, { ...req, startHeight, startIdx: END_OF_BLOCK }) };
    });
  }

  /**
   * Ends a live subscription: no more matching, its backlog dropped. The row stays (inactive) with
   * its delivery cursor, so that a later subscribe with the same id resumes after the last
   * delivered event. Returns null when the id is not live. Locks the row before its backlog, in
   * the order delivery records take them (see DeliveryStore.deliveredBatch). `by` is who asks (an
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
      const row = await write.unsubscribed(c, id, by);
      if (!row) return null;
      await c.query("INSERT INTO subscription_endings (subscription_id, owner, ended_by, ended_at) VALUES ($1, $2, $3, $4)", [
        id,
        row.owner,
        by.caller,
        by.now,
      ]);
      await c.query("DELETE FROM subscription_backlog WHERE subscription_id = $1", [id]);
      return row;
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
  replay(id: string | null): Promise<string[]> {
    return write.replayed(this.pool, id);
  }

  /**
   * Replays a live subscription from a position: the first event sealed at or after `from.timeMs`,
   * or the event at `from.event`. Every event from there on is delivered again, in order (the
   * cursor goes back, the backlog is refilled by the delivery job, a dead letter is released);
   * a position past the delivery cursor moves nothing. Null when the id is not live.
   */
  rewind(id: string, from: { timeMs: number } | { event: LedgerPosition }): Promise<SubscriptionRow | null> {
    return inTransaction(this.pool, async (c) => {
      const live = (await c.query<{ g: string }>("SELECT group_id AS g FROM subscriptions WHERE id = $1 AND active", [id])).rows[0];
      if (!live) return null;
      // The group's lock first, then the row, as subscribe and unsubscribe take them.
      const dispatched = await lockDispatchCursor(c, live.g);
      const row = (
        await c.query<{ h: number; i: number }>(
          "SELECT delivered_height AS h, delivered_idx AS i FROM subscriptions WHERE id = $1 AND active FOR UPDATE",
          [id],
        )
      ).rows[0];
      if (!row) return null;
      const first =
        "event" in from
          ? from.event
          : ((
              await c.query<{ height: number }>(
                "SELECT height FROM blocks WHERE group_id = $1 AND sealed_at >= $2 ORDER BY sealed_at, height LIMIT 1",
                [live.g, from.timeMs],
              )
            ).rows.map((b) => ({ height: b.height, idx: 0 }))[0] ?? null);
      const { cursor, catchUpTo } = rewoundStart(first, { height: row.h, idx: row.i }, dispatched);
      await c.query("DELETE FROM subscription_backlog WHERE subscription_id = $1", [id]);
      return write.rewound(c, id, cursor, catchUpTo);
    });
  }
}
