import type pg from "pg";
import { caughtUp, type DispatchPlan, type LedgerEvent, type MatchedRows, type MatchRule } from "@evb/domain";
import { OpenTransaction } from "./pool.ts";
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

/** What a run reads under the group's lock, for the planner. */
export interface DispatchRead {
  /** The group's dispatch cursor, as locked. */
  cursor: LedgerPosition;
  head: number;
  /** The ledger's identity; when it is not the one asked for, `changes` are all of its subscriptions. */
  ledger: string;
  /** Subscription changes after the revision asked for, in revision order. */
  changes: SubscriptionChange[];
  /** Events after the cursor up to the head, in ledger order, at most `maxEvents + 1`. */
  events: LedgerEvent[];
}

/** The read statement's row: events as (height, idx, topic, traceparent) arrays. */
interface ReadRow {
  head: number;
  ledger: string;
  changes: SubscriptionChange[];
  events: [number, number, string, string | null][];
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
   * Starts a dispatch run of the group: a transaction holding the group's cursor (its row lock)
   * until the run is committed or aborted. The caller reads, plans and writes through it.
   */
  async open(groupId: string): Promise<DispatchRun> {
    const t = await OpenTransaction.begin(this.pool);
    try {
      return new DispatchRun(t, groupId, await lockDispatchCursor(t.client, groupId));
    } catch (err) {
      await t.abort(err);
      throw err;
    }
  }
}

/**
 * One dispatch run's transaction, under the group's lock (`DispatchStore.open`): `read` what
 * planning needs, `write` what the plan decided, then `commit` (or `abort`: nothing is written).
 * Each run advances the group's cursor in the same transaction that writes the backlog rows.
 */
export class DispatchRun {
  private readonly t: OpenTransaction;
  private readonly groupId: string;
  readonly cursor: LedgerPosition;

  constructor(t: OpenTransaction, groupId: string, cursor: LedgerPosition) {
    this.t = t;
    this.groupId = groupId;
    this.cursor = cursor;
  }

  /**
   * Reads the subscription changes after `since.revision` (all of them when the ledger is not
   * `since.ledger`), the sealed head and up to `maxEvents + 1` events after the cursor.
   */
  async read(since: { revision: number; ledger: string | null }, maxEvents: number): Promise<DispatchRead> {
    const c = this.t.client;
    const { groupId, cursor } = this;
    // One statement, so one snapshot: the head, and every event at or below it (seals commit in
    // height order under the chain-head lock, so nothing at or below the head is missing and
    // nothing above it is dispatched half), with the subscription changes since `revision`.
    const read = (
      await c.query<ReadRow>(
        `SELECT h.head, (SELECT id FROM ledger_identity) AS ledger, ${CHANGES_SINCE_2} AS changes,
           (SELECT COALESCE(json_agg(json_build_array(e.height, e.idx, e.topic, e.traceparent) ORDER BY e.height, e.idx), '[]')
            FROM (SELECT height, idx, topic, traceparent FROM events WHERE group_id = $1 AND (height, idx) > ($3, $4) AND height <= h.head
                  ORDER BY height, idx LIMIT $5) e) AS events
         FROM (SELECT COALESCE((SELECT height FROM chain_heads WHERE group_id = $1), 0) AS head) h`,
        [groupId, since.revision, cursor.height, cursor.idx, maxEvents + 1],
      )
    ).rows[0] as ReadRow;
    // Another ledger's revisions start again: its index is built from all of its subscriptions.
    if (read.ledger !== since.ledger && since.revision > 0) {
      read.changes = (await c.query<{ changes: SubscriptionChange[] }>(`SELECT ${CHANGES_SINCE_2} AS changes`, [groupId, 0])).rows[0]
        ?.changes as SubscriptionChange[];
    }
    // Compact on the wire (up to maxEvents + 1 of them): arrays, named here.
    const events: LedgerEvent[] = caughtUp(cursor, read.head)
      ? []
      : read.events.map(([height, idx, topic, traceparent]) => ({ height, idx, topic, traceparent }));
    return { cursor, head: read.head, ledger: read.ledger, changes: read.changes, events };
  }

  /**
   * Writes `plan`: appends its rows to the backlogs (`maxRows` per INSERT) and moves the cursor.
   * Returns the subscriptions that got rows, with their counters after the run.
   */
  write(plan: DispatchPlan, maxRows: number): Promise<SubscriptionStats[]> {
    return appendToBacklogs(this.t.client, this.groupId, plan, maxRows);
  }

  /** Ends the run, keeping what it wrote. */
  commit(): Promise<void> {
    return this.t.commit();
  }

  /** Ends the run after `err`, writing nothing (the cursor does not move). */
  abort(err: unknown): Promise<void> {
    return this.t.abort(err);
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
