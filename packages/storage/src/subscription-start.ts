import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";

/**
 * Where a subscription starts, decided purely from positions read under the group's dispatch lock
 * (`dispatched`: every event at or before it is already matched into backlogs).
 */

/**
 * A new subscription starts after the latest block: the sealed head, or the dispatched height when
 * that is higher (the head is read after the lock, so normally it is not).
 */
export function createdStartHeight(head: number, dispatched: LedgerPosition): number {
  return Math.max(head, dispatched.height);
}

export interface ResumeStart {
  /** The dispatcher matches events above this height for the subscription. */
  startHeight: number;
  /** Refill the backlog from the delivered position up to here; null when nothing was missed. */
  catchUpTo: LedgerPosition | null;
}

/**
 * A resumed subscription: the dispatcher matches what follows `dispatched` (the rest of its block
 * when it stopped inside one, so the start is the block before). What was published between the
 * last delivered event and `dispatched` is refilled in pages by the delivery job.
 */
export function resumedStart(dispatched: LedgerPosition, delivered: LedgerPosition): ResumeStart {
  const startHeight = dispatched.idx === END_OF_BLOCK ? dispatched.height : dispatched.height - 1;
  const behind = delivered.height < dispatched.height || (delivered.height === dispatched.height && delivered.idx < dispatched.idx);
  return { startHeight, catchUpTo: behind ? dispatched : null };
}

/**
 * A subscription restored into a rebuilt ledger, delivered up to `delivered` (its furthest
 * checkpoint). When the dispatcher is past that, it is resumed there (the gap refilled by its
 * delivery job). When the dispatcher is behind it (it is still going through the rebuilt blocks),
 * matching starts after the delivered block, so nothing delivered is matched again; a cursor
 * inside a block goes back to that block's start, whose delivered part is sent again (a bounded
 * repeat, never a gap).
 */
export function restoredStart(dispatched: LedgerPosition, delivered: LedgerPosition): ResumeStart & { delivered: LedgerPosition } {
  const behind = delivered.height < dispatched.height || (delivered.height === dispatched.height && delivered.idx < dispatched.idx);
  if (behind) return { ...resumedStart(dispatched, delivered), delivered };
  const from = delivered.idx === END_OF_BLOCK ? delivered : { height: delivered.height - 1, idx: END_OF_BLOCK };
  return { startHeight: from.height, catchUpTo: null, delivered: from };
}

/** Whether position `a` comes before `b` in ledger order. */
function before(a: LedgerPosition, b: LedgerPosition): boolean {
  return a.height < b.height || (a.height === b.height && a.idx < b.idx);
}

/**
 * A replay from a position (admin/replayDeadLetters with fromTime or fromEventId): `from` is the
 * first event to deliver again (null: none is at or after the time asked for). The cursor goes
 * back to just before it, never forward (a position past the cursor would skip undelivered
 * events: the cursor then stays where it is), and what lies between the cursor and `dispatched`
 * is refilled; the dispatcher matches the rest as usual.
 */
export function rewoundStart(
  from: LedgerPosition | null,
  delivered: LedgerPosition,
  dispatched: LedgerPosition,
): { cursor: LedgerPosition; catchUpTo: LedgerPosition | null } {
  const asked = from === null ? delivered : { height: from.height, idx: from.idx - 1 };
  const cursor = before(asked, delivered) ? asked : delivered;
  return { cursor, catchUpTo: before(cursor, dispatched) ? dispatched : null };
}
