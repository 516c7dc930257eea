import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";

/** Bounds of one dispatch transaction. */
export interface DispatchLimits {
  /** Events matched per transaction. */
  maxEvents: number;
  /** Backlog rows written per transaction (and per INSERT); a single event matching more is taken alone. */
  maxRows: number;
}

/** A sealed event as dispatch sees it: where it is and which topic it belongs to. */
export interface LedgerEvent {
  height: number;
  idx: number;
  topic: string;
  /** The traceparent stored with the event (tracing on), which the dispatch span links to. */
  traceparent?: string | null;
}

/** Matched (subscription, event) pairs, column-wise as the backlog INSERT takes them. */
export interface MatchedRows {
  subs: string[];
  heights: number[];
  idxs: number[];
}

/** What one dispatch run writes: the backlog rows and where the cursor moves. */
export interface DispatchPlan {
  to: LedgerPosition;
  /** Events taken (matched or not). */
  events: number;
  rows: MatchedRows;
}

/** Has the cursor reached the sealed head (every event of the head block dispatched)? */
export function caughtUp(cursor: LedgerPosition, head: number): boolean {
  return cursor.height > head || (cursor.height === head && cursor.idx === END_OF_BLOCK);
}

/**
 * Plans one dispatch run, purely. `events` are the events after `cursor` up to `head` in ledger
 * order (at least `maxEvents + 1` of them when there are that many, so the planner can see
 * whether the block of the last event taken is complete). It takes at most `maxEvents` events
 * and, unless a single event matches more, at most `maxRows` backlog rows; the cursor moves to
 * the whole head when nothing is left, to the whole block of the last event taken when the next
 * event is in a later block, or else to that event itself (so even one block with more matches
 * than `maxRows` is dispatched in bounded runs). Null when the cursor is at the head already.
 */
export function planDispatch(
  cursor: LedgerPosition,
  head: number,
  events: readonly LedgerEvent[],
  match: (topic: string, height: number) => readonly string[],
  limits: DispatchLimits,
): DispatchPlan | null {
  if (caughtUp(cursor, head)) return null;
  const rows: MatchedRows = { subs: [], heights: [], idxs: [] };
  let taken = 0;
  for (const e of events) {
    if (taken === limits.maxEvents) break;
    const ids = match(e.topic, e.height);
    if (taken > 0 && rows.subs.length + ids.length > limits.maxRows) break;
    for (const id of ids) {
      rows.subs.push(id);
      rows.heights.push(e.height);
      rows.idxs.push(e.idx);
    }
    taken++;
  }
  let to: LedgerPosition = { height: head, idx: END_OF_BLOCK };
  const next = events[taken];
  if (next) {
    const last = events[taken - 1] as LedgerEvent;
    to = { height: last.height, idx: next.height > last.height ? END_OF_BLOCK : last.idx };
  }
  return { to, events: taken, rows };
}
