import type { SubscriptionRow } from "@evb/storage";

/**
 * Where a callback subscription's delivery stands, as the console shows it:
 * - `paused`: an operator paused it (only when the row carries a pause; nothing is sent);
 * - `suspended`: dead-lettered, waiting for a replay;
 * - `retrying`: an attempt failed (the head event, or a resend) and is retried at `nextAttemptAt`;
 * - `delivering`: events wait and nothing has failed since the last success;
 * - `caught-up`: nothing waits.
 */
type DeliveryState = "paused" | "suspended" | "retrying" | "delivering" | "caught-up";

/** The row's fields the state is read from; `paused`/`pausedAt` only exist once pausing does. */
export type StateInput = Pick<SubscriptionRow, "deadAt" | "attempts" | "nextAttemptAt" | "pending" | "failingSince" | "lastError"> & {
  paused?: boolean | null;
  pausedAt?: number | null;
};

export interface StateOfRow {
  state: DeliveryState;
  /** When the head event is tried again (retrying only), epoch ms. */
  nextAttemptAt: number | null;
  /** Since when attempts fail without a success (retrying and suspended), epoch ms. */
  failingSince: number | null;
  /** The last failed attempt's error while failing or suspended; null once delivery succeeds again. */
  lastError: string | null;
}

/**
 * The state of one row (pure). The order is the precedence: a paused subscription is paused
 * whatever else holds, a dead letter is suspended even with attempts on record, and a failure
 * run makes a subscription `retrying`, never `delivering`: a receiver failing
 * for minutes with events waiting must not look healthy.
 */
export function subscriptionState(row: StateInput): StateOfRow {
  const failing = row.attempts > 0;
  const base = {
    nextAttemptAt: null,
    failingSince: failing ? row.failingSince : null,
    lastError: failing || row.deadAt !== null ? row.lastError : null,
  };
  if (row.paused === true || (row.pausedAt !== undefined && row.pausedAt !== null)) return { ...base, state: "paused" };
  if (row.deadAt !== null) return { ...base, state: "suspended" };
  if (failing) return { ...base, state: "retrying", nextAttemptAt: row.nextAttemptAt };
  return { ...base, state: row.pending > 0 ? "delivering" : "caught-up" };
}
