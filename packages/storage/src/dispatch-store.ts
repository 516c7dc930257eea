import type pg from "pg";
import type { MatchRule } from "@evb/domain";
import { inTransaction } from "./pool.ts";
import { caughtUp, type DispatchLimits, type DispatchPlan, type LedgerEvent, type MatchedRows, planDispatch } from "./dispatch-plan.ts";
import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
import { write } from "./subscription-lifecycle.ts";
import type { SubscriptionStats } from "./subscription-row.ts";
import { lockDispatchCursor } from "./subscription-store.ts";

/** A subscription as the dispatcher's matcher needs it; `active: false` means "drop it". */
export interface SubscriptionChange {
  id: string;
  topic: string;
  matchRule: MatchRule;
  startHeight: number;
  active: boolean;
  revision: number;
}

/**
 * The dispatcher's in-memory index of one group's subscriptions. `apply` gets every change with
 * a revision above `revision` (in revision order) before each run; `match` returns the ids of
 * subscriptions that want an event of `topic` sealed at `height`.
 */
export interface DispatchIndex {
  readonly revision: number;
  apply(changes: readonly SubscriptionChange[]): void;
  match(topic: string, height: number): readonly string[];
}

/** What a run reads under the group's lock, for the planner. */
export interface DispatchRead {
  cursor: LedgerPosition;
  head: number;
  /** Subscription changes after the revision asked for, in revision order. */
  changes: SubscriptionChange[];
  /** Events after the cursor up to the head, in ledger order, at most `maxEvents + 1`. */
  events: LedgerEvent[];
}

export interface DispatchResult {
  from: LedgerPosition;
  to: LedgerPosition;
  events: number;
  /** Backlog rows matched (inserted, unless a row was there already). */
  rows: number;
  /** Subscriptions that got new backlog entries, with their counters after the run. */
  touched: SubscriptionStats[];
}

/**
 * Matching sealed events into per-subscription backlogs (the notifier's dispatcher). Each run
 * advances the group's cursor in the same transaction that writes the backlog rows, so a crash
 * either keeps both or neither: no event is skipped and none is matched twice.
 */
export class DispatchStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Cheap check outside any lock: has the group sealed events not yet dispatched? */
  async behind(groupId: string): Promise<boolean> {
    const r = await this.pool.query<{ behind: boolean }>(
      `SELECT COALESCE(d.height < h.height OR (d.height = h.height AND d.idx < $2), h.height > 0) AS behind
       FROM chain_heads h LEFT JOIN dispatch_cursors d ON d.group_id = h.group_id WHERE h.group_id = $1`,
      [groupId, END_OF_BLOCK],
    );
    return r.rows[0]?.behind ?? false;
  }

  /**
   * Where the group's dispatch stands, read without any lock (so a run holding the cursor does
   * not block it): the cursor (absent before the first run) and the sealed head.
   */
  async progress(groupId: string): Promise<{ cursor: LedgerPosition | null; head: number }> {
    const r = await this.pool.query<{ head: number | null; height: number | null; idx: number | null }>(
      `SELECT (SELECT height FROM chain_heads WHERE group_id = $1) AS head, d.height, d.idx
       FROM (SELECT 1) one LEFT JOIN dispatch_cursors d ON d.group_id = $1`,
      [groupId],
    );
    const row = r.rows[0];
    return {
      head: row?.head ?? 0,
      cursor: row?.height === null || row?.height === undefined ? null : { height: row.height, idx: row.idx ?? 0 },
    };
  }

  /**
   * One dispatch run with the notifier's index: the store reads, `planDispatch` decides, the
   * store writes. Returns null when there was nothing to dispatch.
   */
  dispatch(groupId: string, index: DispatchIndex, limits: DispatchLimits): Promise<DispatchResult | null> {
    return this.run(groupId, index.revision, limits, (read) => {
      if (read.changes.length > 0) index.apply(read.changes);
      return planDispatch(read.cursor, read.head, read.events, (topic, height) => index.match(topic, height), limits);
    });
  }

  /**
   * The SQL of one run, in one transaction under the group's lock: reads the subscription changes
   * after `revision`, the cursor, the sealed head and up to `maxEvents + 1` events after the
   * cursor, hands them to `plan`, then appends the planned rows to the backlogs (`maxRows` per
   * INSERT) and moves the cursor. Nothing is written when `plan` returns null.
   */
  run(
    groupId: string,
    revision: number,
    limits: DispatchLimits,
    plan: (read: DispatchRead) => DispatchPlan | null,
  ): Promise<DispatchResult | null> {
    return inTransaction(this.pool, async (c) => {
      const cursor = await lockDispatchCursor(c, groupId);
      const changes = await c.query<SubscriptionChange>(
        `SELECT id, topic, match_rule AS "matchRule", start_height AS "startHeight", active, revision
         FROM subscriptions WHERE group_id = $1 AND revision > $2 ORDER BY revision`,
        [groupId, revision],
      );
      // The head first: seals commit in height order under the chain-head lock, so every event at
      // or below it is visible to the read below, and nothing above it is dispatched half.
      const head =
        (await c.query<{ height: number }>("SELECT height FROM chain_heads WHERE group_id = $1", [groupId])).rows[0]?.height ?? 0;
      const events = caughtUp(cursor, head)
        ? []
        : (
            await c.query<LedgerEvent>(
              `SELECT height, idx, topic FROM events WHERE group_id = $1 AND (height, idx) > ($2, $3) AND height <= $4
               ORDER BY height, idx LIMIT $5`,
              [groupId, cursor.height, cursor.idx, head, limits.maxEvents + 1],
            )
          ).rows;
      const p = plan({ cursor, head, changes: changes.rows, events });
      if (!p) return null;
      const touched = await appendToBacklogs(c, p.rows, limits.maxRows);
      await c.query("UPDATE dispatch_cursors SET height = $2, idx = $3 WHERE group_id = $1", [groupId, p.to.height, p.to.idx]);
      return { from: cursor, to: p.to, events: p.events, rows: p.rows.subs.length, touched };
    });
  }
}

/**
 * Inserts the rows in statements of at most `pageRows`, then moves each touched subscription's
 * pending counter by what was really inserted (the `matched` transition): a row already in the
 * backlog (ON CONFLICT) must not count twice, or the counter drifts above the backlog for good.
 */
async function appendToBacklogs(c: pg.PoolClient, rows: MatchedRows, pageRows: number): Promise<SubscriptionStats[]> {
  const counts = new Map<string, number>();
  for (let i = 0; i < rows.subs.length; i += pageRows) {
    const inserted = await c.query<{ s: string; n: number }>(
      `WITH ins AS (
         INSERT INTO subscription_backlog (subscription_id, height, idx)
         SELECT s, h, i FROM unnest($1::text[], $2::bigint[], $3::int[]) AS u(s, h, i) ON CONFLICT DO NOTHING
         RETURNING subscription_id)
       SELECT subscription_id AS s, count(*)::int AS n FROM ins GROUP BY subscription_id`,
      [rows.subs.slice(i, i + pageRows), rows.heights.slice(i, i + pageRows), rows.idxs.slice(i, i + pageRows)],
    );
    for (const r of inserted.rows) counts.set(r.s, (counts.get(r.s) ?? 0) + r.n);
  }
  return write.matched(c, counts);
}
