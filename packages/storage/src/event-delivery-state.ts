import type { LedgerPosition } from "./ledger-position.ts";

/**
 * Where one event stands for one subscription that matches its topic (admin/eventDeliveries):
 * - `delivered`: a receiver answered 2xx for it (the attempt log says so), or the subscription's
 *   delivery cursor is past it and it was published after the subscription started;
 * - `pending`: waiting in the backlog (behind others, or being retried), or not yet matched;
 * - `dead-lettered`: the head of a suspended backlog (admin/replayDeadLetters resumes it);
 * - `before-start`: published before the subscription started, so never matched (a replay from
 *   an earlier position, or a resend, sends it).
 */
export type EventDeliveryState = "delivered" | "pending" | "dead-lettered" | "before-start";

export interface EventDeliveryFacts {
  /** The event is in the subscription's backlog, and whether it is the backlog's head. */
  inBacklog: boolean;
  head: boolean;
  /** The subscription is suspended (dead-lettered). */
  dead: boolean;
  /** The attempt log holds a 2xx for the event. */
  answered2xx: boolean;
  /** The subscription's delivery cursor and the height after which it matches events. */
  delivered: LedgerPosition;
  startHeight: number;
}

/** Decides the state, purely, from what was read (the backlog first: a replayed event is pending again). */
export function eventDeliveryState(ev: LedgerPosition, f: EventDeliveryFacts): EventDeliveryState {
  if (f.inBacklog) return f.head && f.dead ? "dead-lettered" : "pending";
  if (f.answered2xx) return "delivered";
  const passed = ev.height < f.delivered.height || (ev.height === f.delivered.height && ev.idx <= f.delivered.idx);
  if (!passed) return "pending";
  return ev.height > f.startHeight ? "delivered" : "before-start";
}
