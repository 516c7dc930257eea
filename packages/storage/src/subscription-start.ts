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
