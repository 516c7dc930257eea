import { type MatchRule, matchesPattern } from "@evb/domain";

/** A refill position: the last event looked at, and for a plain topic its sequence number. */
export interface RefillPosition {
  height: number;
  idx: number;
  seq: number | null;
}

/** One event a refill page looked at. */
export interface LookedAt extends RefillPosition {
  topic: string;
}

export interface RefillStep {
  /** Events to append to the backlog. */
  hits: { height: number; idx: number }[];
  /** Where the next page starts. */
  next: RefillPosition;
  /** Everything up to the target is in the backlog now. */
  done: boolean;
}

/**
 * Decides one refill page, purely: which of the events looked at go to the backlog (all of them
 * for a plain topic, whose page is read by topic; those matching the pattern otherwise), where
 * the next page starts (after the last event looked at) and whether the refill is done (a page
 * shorter than `limit`, or an empty one, reached the target).
 */
export function planRefillPage(
  at: RefillPosition,
  sub: { topic: string; matchRule: MatchRule; pattern: boolean },
  looked: readonly LookedAt[],
  limit: number,
): RefillStep {
  const last = looked[looked.length - 1];
  if (!last) return { hits: [], next: at, done: true };
  const hits = (sub.pattern ? looked.filter((e) => matchesPattern(sub.topic, e.topic, sub.matchRule)) : looked).map((e) => ({
    height: e.height,
    idx: e.idx,
  }));
  return { hits, next: { height: last.height, idx: last.idx, seq: last.seq }, done: looked.length < limit };
}
