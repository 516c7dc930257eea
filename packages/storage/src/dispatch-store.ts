import type pg from "pg";
import type { MatchRule } from "@evb/domain";
import { inTransaction } from "./pool.ts";
import { END_OF_BLOCK, type LedgerPosition, lockDispatchCursor, STATS_COLUMNS, type SubscriptionStats } from "./subscription-store.ts";

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

/** Bounds of one dispatch transaction. */
export interface DispatchLimits {
  /** Events matched per transaction. */
  maxEvents: number;
  /** Backlog rows written per transaction (and per INSERT); a single event matching more is taken alone. */
  maxRows: number;
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
   * One dispatch run: under the group's lock, refresh the index, match the events after the
   * cursor (at most `maxEvents` events and, unless a single event matches more, `maxRows`
   * backlog rows) and append them to the matching backlogs. The cursor moves by event, so even
   * one block with more matches than `maxRows` is dispatched in bounded runs. Returns null when
   * there was nothing to dispatch.
   */
  dispatch(groupId: string, index: DispatchIndex, limits: DispatchLimits): Promise<DispatchResult | null> {
    return inTransaction(this.pool, async (c) => {
      const from = await lockDispatchCursor(c, groupId);
      const changes = await c.query<SubscriptionChange>(
        `SELECT id, topic, match_rule AS "matchRule", start_height AS "startHeight", active, revision
         FROM subscriptions WHERE group_id = $1 AND revision > $2 ORDER BY revision`,
        [groupId, index.revision],
      );
      if (changes.rows.length > 0) index.apply(changes.rows);
      // The head first: seals commit in height order under the chain-head lock, so every event at
      // or below it is visible to the read below, and nothing above it is dispatched half.
      const head =
        (await c.query<{ height: number }>("SELECT height FROM chain_heads WHERE group_id = $1", [groupId])).rows[0]?.height ?? 0;
      if (from.height > head || (from.height === head && from.idx === END_OF_BLOCK)) return null;
      const events = (
        await c.query<{ height: number; idx: number; topic: string }>(
          `SELECT height, idx, topic FROM events WHERE group_id = $1 AND (height, idx) > ($2, $3) AND height <= $4
           ORDER BY height, idx LIMIT $5`,
          [groupId, from.height, from.idx, head, limits.maxEvents + 1],
        )
      ).rows;
      const rows = new MatchedRows();
      let taken = 0;
      for (const e of events) {
        if (taken === limits.maxEvents) break;
        const ids = index.match(e.topic, e.height);
        if (taken > 0 && rows.size + ids.length > limits.maxRows) break;
        rows.add(ids, e.height, e.idx);
        taken++;
      }
      // Everything up to the head when no event is left; else up to the last event taken, or its
      // whole block when the next event is in a later one.
      let to: LedgerPosition = { height: head, idx: END_OF_BLOCK };
      const next = events[taken];
      if (next) {
        const last = events[taken - 1] as { height: number; idx: number };
        to = { height: last.height, idx: next.height > last.height ? END_OF_BLOCK : last.idx };
      }
      const touched = await appendToBacklogs(c, rows, limits.maxRows);
      await c.query("UPDATE dispatch_cursors SET height = $2, idx = $3 WHERE group_id = $1", [groupId, to.height, to.idx]);
      return { from, to, events: taken, rows: rows.size, touched };
    });
  }
}

/** Matched (subscription, event) pairs, column-wise as the INSERT takes them. */
class MatchedRows {
  readonly subs: string[] = [];
  readonly heights: number[] = [];
  readonly idxs: number[] = [];
  get size(): number {
    return this.subs.length;
  }
  add(ids: readonly string[], height: number, idx: number): void {
    for (const id of ids) {
      this.subs.push(id);
      this.heights.push(height);
      this.idxs.push(idx);
    }
  }
}

/**
 * Inserts the rows in statements of at most `pageRows`, then moves each touched subscription's
 * pending_count by what was really inserted: a row already in the backlog (ON CONFLICT) must not
 * count twice, or the counter drifts above the backlog for good.
 */
async function appendToBacklogs(c: pg.PoolClient, rows: MatchedRows, pageRows: number): Promise<SubscriptionStats[]> {
  const counts = new Map<string, number>();
  for (let i = 0; i < rows.size; i += pageRows) {
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
  if (counts.size === 0) return [];
  const r = await c.query<SubscriptionStats>(
    `UPDATE subscriptions SET pending_count = pending_count + u.n, stats_rev = stats_rev + 1
     FROM unnest($1::text[], $2::bigint[]) AS u(s, n) WHERE subscriptions.id = u.s
     RETURNING ${STATS_COLUMNS}`,
    [[...counts.keys()], [...counts.values()]],
  );
  return r.rows;
}
