import type pg from "pg";
import { isPattern, type MatchRule } from "@evb/domain";
import { type LookedAt, planRefillPage, type RefillPosition } from "./catch-up-plan.ts";
import { insertBacklogSql } from "./subscription-lifecycle.ts";

/** Where a resumed subscription's refill stands (the columns of migration 006). */
export interface CatchUpState {
  id: string;
  groupId: string;
  topic: string;
  matchRule: MatchRule;
  height: number;
  idx: number;
  seq: number | null;
  toHeight: number;
  toIdx: number;
}

export interface CatchUpPage {
  /** Backlog rows inserted. */
  added: number;
  /** The new refill position (the last event looked at). */
  height: number;
  idx: number;
  seq: number | null;
  /** Everything up to the target is in the backlog now. */
  done: boolean;
}

/**
 * Refills one page of a resumed subscription's backlog: the matching events after the refill
 * position, up to the target, at most `limit` events looked at. A plain topic walks its own
 * events through the (group_id, topic, seq) index (seq order is ledger order within a topic); a
 * pattern walks the group's events and matches each topic.
 */
export async function catchUpPage(c: pg.PoolClient, s: CatchUpState, limit: number): Promise<CatchUpPage> {
  const pattern = isPattern(s.topic);
  let at: RefillPosition = { height: s.height, idx: s.idx, seq: null };
  let looked: LookedAt[];
  if (!pattern) {
    let seq = s.seq;
    if (seq === null) {
      // Once per refill: the topic's sequence number at the position (0 when none is before it).
      const found = await c.query<{ seq: number }>(
        `SELECT seq FROM events WHERE group_id = $1 AND topic = $2 AND (height, idx) <= ($3, $4) ORDER BY seq DESC LIMIT 1`,
        [s.groupId, s.topic, s.height, s.idx],
      );
      seq = found.rows[0]?.seq ?? 0;
    }
    at = { ...at, seq };
    looked = (
      await c.query<LookedAt>(
        `SELECT height, idx, seq, topic FROM events WHERE group_id = $1 AND topic = $2 AND seq > $3 AND (height, idx) <= ($4, $5)
         ORDER BY seq LIMIT $6`,
        [s.groupId, s.topic, seq, s.toHeight, s.toIdx, limit],
      )
    ).rows;
  } else {
    looked = (
      await c.query<LookedAt>(
        `SELECT height, idx, NULL::bigint AS seq, topic FROM events WHERE group_id = $1 AND (height, idx) > ($2, $3) AND (height, idx) <= ($4, $5)
         ORDER BY height, idx LIMIT $6`,
        [s.groupId, s.height, s.idx, s.toHeight, s.toIdx, limit],
      )
    ).rows;
  }
  const step = planRefillPage(at, { topic: s.topic, matchRule: s.matchRule, pattern }, looked, limit);
  let added = 0;
  if (step.hits.length > 0) {
    const r = await c.query(insertBacklogSql({ id: "$1" }, "$2", "$3"), [
      s.id,
      step.hits.map((e) => e.height),
      step.hits.map((e) => e.idx),
    ]);
    added = r.rowCount ?? 0;
  }
  return { added, ...step.next, done: step.done };
}
