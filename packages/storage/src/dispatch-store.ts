import type pg from "pg";
import type { MatchRule } from "@evb/domain";
import { inTransaction } from "./pool.ts";
import { caughtUp, type DispatchLimits, type DispatchPlan, type LedgerEvent, type MatchedRows, planDispatch } from "./dispatch-plan.ts";
import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
import { insertBacklogSql, write } from "./subscription-lifecycle.ts";
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
  /** The identity of the ledger the index was built from (null before the first run). */
  readonly ledger: string | null;
  /**
   * Empties the index for another ledger (the schema dropped and made again, a restored or
   * rebuilt database): its revisions start again, so nothing of the old index holds.
   */
  reset(ledger: string): void;
  apply(changes: readonly SubscriptionChange[]): void;
  match(topic: string, height: number): readonly string[];
}

/** What a run reads under the group's lock, for the planner. */
export interface DispatchRead {
  cursor: LedgerPosition;
  head: number;
  /** The ledger's identity; when it is not the one asked for, `changes` are all of its subscriptions. */
  ledger: string;
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
  /** The traceparents of the dispatched events that have one (sealed with tracing on). */
  traceparents?: string[];
}

/** The subscription changes of group $1 after revision $2, in revision order, as one JSON value. */
const CHANGES_SINCE_2 = `(SELECT COALESCE(json_agg(json_build_object('id', id, 'topic', topic, 'matchRule', match_rule,
    'startHeight', start_height, 'active', active, 'revision', revision) ORDER BY revision), '[]')
  FROM subscriptions WHERE group_id = $1 AND revision > $2)`;

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
    return this.run(groupId, index, limits, (read) => {
      if (read.ledger !== index.ledger) index.reset(read.ledger);
      if (read.changes.length > 0) index.apply(read.changes);
      return planDispatch(read.cursor, read.head, read.events, (topic, height) => index.match(topic, height), limits);
    });
  }

  /**
   * The SQL of one run, in one transaction under the group's lock: reads the subscription changes
   * after `since.revision` (all of them when the ledger is not `since.ledger`), the cursor, the sealed head and up to `maxEvents + 1` events after the
   * cursor, hands them to `plan`, then appends the planned rows to the backlogs (`maxRows` per
   * INSERT) and moves the cursor. Nothing is written when `plan` returns null.
   */
  run(
    groupId: string,
    since: { revision: number; ledger: string | null },
    limits: DispatchLimits,
    plan: (read: DispatchRead) => DispatchPlan | null,
  ): Promise<DispatchResult | null> {
    return inTransaction(this.pool, async (c) => {
      const cursor = await lockDispatchCursor(c, groupId);
      // One statement, so one snapshot: the head, and every event at or below it (seals commit in
      // height order under the chain-head lock, so nothing at or below the head is missing and
      // nothing above it is dispatched half), with the subscription changes since `revision`.
      const read = (
        await c.query<{ head: number; ledger: string; changes: SubscriptionChange[]; events: [number, number, string, string | null][] }>(
          `SELECT h.head, (SELECT id FROM ledger_identity) AS ledger, ${CHANGES_SINCE_2} AS changes,
             (SELECT COALESCE(json_agg(json_build_array(e.height, e.idx, e.topic, e.traceparent) ORDER BY e.height, e.idx), '[]')
              FROM (SELECT height, idx, topic, traceparent FROM events WHERE group_id = $1 AND (height, idx) > ($3, $4) AND height <= h.head
                    ORDER BY height, idx LIMIT $5) e) AS events
           FROM (SELECT COALESCE((SELECT height FROM chain_heads WHERE group_id = $1), 0) AS head) h`,
          [groupId, since.revision, cursor.height, cursor.idx, limits.maxEvents + 1],
        )
      ).rows[0] as { head: number; ledger: string; changes: SubscriptionChange[]; events: [number, number, string, string | null][] };
      // Another ledger's revisions start again: its index is built from all of its subscriptions.
      if (read.ledger !== since.ledger && since.revision > 0) {
        read.changes = (await c.query<{ changes: SubscriptionChange[] }>(`SELECT ${CHANGES_SINCE_2} AS changes`, [groupId, 0])).rows[0]
          ?.changes as SubscriptionChange[];
      }
      const events: LedgerEvent[] = caughtUp(cursor, read.head)
        ? []
        : read.events.map(([height, idx, topic, traceparent]) => ({ height, idx, topic, traceparent }));
      const p = plan({ cursor, head: read.head, ledger: read.ledger, changes: read.changes, events });
      if (!p) return null;
      const touched = await appendToBacklogs(c, groupId, p, limits.maxRows);
      const traceparents: string[] = [];
      for (let i = 0; i < p.events; i++) {
        const tp = events[i]?.traceparent;
        if (tp) traceparents.push(tp);
      }
      return { from: cursor, to: p.to, events: p.events, rows: p.rows.subs.length, touched, traceparents };
    });
  }
}

/**
 * Writes a run's plan: pages of at most `pageRows` backlog rows, the last page in one statement
 * with the cursor move and the `matched` transition, which moves each touched subscription's
 * pending counter by what was really inserted: a row already in the backlog (ON CONFLICT) must
 * not count twice, or the counter drifts above the backlog for good.
 */
async function appendToBacklogs(c: pg.PoolClient, groupId: string, p: DispatchPlan, pageRows: number): Promise<SubscriptionStats[]> {
  const { rows } = p;
  const page = (i: number): MatchedRows => ({
    subs: rows.subs.slice(i, i + pageRows),
    heights: rows.heights.slice(i, i + pageRows),
    idxs: rows.idxs.slice(i, i + pageRows),
  });
  const counts = new Map<string, number>();
  let last = 0;
  for (; last + pageRows < rows.subs.length; last += pageRows) {
    const { subs, heights, idxs } = page(last);
    const inserted = await c.query<{ s: string; n: number }>(
      `WITH ins AS (${insertBacklogSql({ ids: "$1" }, "$2", "$3")} RETURNING subscription_id)
       SELECT subscription_id AS s, count(*)::int AS n FROM ins GROUP BY subscription_id`,
      [subs, heights, idxs],
    );
    for (const r of inserted.rows) counts.set(r.s, (counts.get(r.s) ?? 0) + r.n);
  }
  return write.matched(c, { page: page(last), inserted: counts, groupId, to: p.to });
}
