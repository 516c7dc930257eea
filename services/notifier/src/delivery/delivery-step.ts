import type { CallbackFailureKind } from "@evb/domain";
import { nextRetry, parseRetryAfter, type RetryPolicy, type SuspendReason, suspension, suspensionError } from "./retry-policy.ts";

/**
 * Every decision of a delivery slice, pure: where a delivery decides to post the next event,
 * record what was delivered, yield its slot, park for a retry or dead-letter the subscription.
 * `delivery-slice.ts` applies them (Postgres, HTTP, the clock); docs/delivery.md says why they
 * keep the order and at-least-once promises.
 */

/** The limits a slice works under (from the notifier's settings). */
export interface DeliveryLimits {
  retry: RetryPolicy;
  /** A subscription failing without a success for this long is suspended (DELIVERY_DISABLE_AFTER_MS). */
  disableAfterMs: number;
  /** Delivered events recorded together (DELIVERY_RECORD_EVENTS). */
  recordEvents: number;
  /** Delivered events wait at most this long to be recorded (ms). */
  recordMs: number;
  /** Deliveries per slice before it yields its slot (DELIVERY_SLICE_EVENTS), per window place. */
  sliceEvents: number;
  /** Most callbacks of one subscription in flight at once (DELIVERY_WINDOW); 1: one at a time. */
  window: number;
}

/** What a slice knows while it works down its batch. */
export interface SliceState {
  /** Failed attempts of the head event so far (the row's `attempts`; 0 after any delivery). */
  attempts: number;
  /** When the current run of failures began (the row's `failing_since`), null when none. */
  failingSince: number | null;
  /** Events delivered in this slice. */
  sent: number;
  /** Delivered events not yet recorded. */
  unrecorded: number;
  /** When the slice last recorded (or began), epoch ms. */
  recordedAt: number;
  /** When the slice must yield its slot, epoch ms. */
  endsAt: number;
  /** Callbacks that may be in flight at once right now: 1 after a failure, doubling per 2xx up to the limit. */
  window: number;
}

/** How one attempt at the head event ended, as the step needs it. */
export type AttemptOutcome =
  | { delivered: true }
  | { delivered: false; failure: CallbackFailureKind; status: number | null; retryAfter?: string; error: string };

/** The retry state written for the head after a failed attempt. */
interface HeadFailure {
  attempts: number;
  failingSince: number;
  /** The text kept as `last_error`. */
  error: string;
}

export type Step =
  /** Go on: post the next event (the window allowing). */
  | { action: "post"; state: SliceState }
  /** Record the delivered events now, then go on. */
  | { action: "record"; state: SliceState }
  /** Start nothing more; once the callbacks in flight are settled, record and give the slot up. */
  | { action: "yield"; state: SliceState }
  /** Record the delivered events, write the head's retry state and park the job until `nextAttemptAt`. */
  | { action: "park"; state: SliceState; failure: HeadFailure; nextAttemptAt: number; firstFailure: boolean }
  /** Record the delivered events and suspend the subscription with its backlog kept (dead letter). */
  | { action: "dead-letter"; state: SliceState; failure: HeadFailure; reason: SuspendReason };

/** The state a slice starts its batch with, from the subscription row. */
export function sliceStart(
  row: { attempts: number; failingSince: number | null },
  now: number,
  limits: DeliveryLimits,
  sliceMs: number,
  window: number,
): SliceState {
  return {
    attempts: row.attempts,
    failingSince: row.failingSince,
    sent: 0,
    unrecorded: 0,
    recordedAt: now,
    endsAt: now + sliceMs,
    // A head being retried goes alone: nothing behind it is sent until it is delivered.
    window: row.attempts > 0 ? 1 : Math.max(1, Math.min(window, limits.window)),
  };
}

/**
 * The answer to one attempt at the head event (attempts are judged in event order, even when
 * several were in flight): `startedAt` when it was sent, `now` when it ended, `random` in [0, 1)
 * for the backoff's jitter.
 */
export function deliveryStep(
  state: SliceState,
  outcome: AttemptOutcome,
  at: { startedAt: number; now: number },
  limits: DeliveryLimits,
  random: number,
): Step {
  if (outcome.delivered) {
    const next: SliceState = {
      ...state,
      attempts: 0,
      failingSince: null,
      sent: state.sent + 1,
      unrecorded: state.unrecorded + 1,
      window: Math.min(limits.window, state.window * 2),
    };
    if (next.sent >= limits.sliceEvents * limits.window || at.now >= state.endsAt) return { action: "yield", state: next };
    if (next.unrecorded >= limits.recordEvents || at.now - state.recordedAt >= limits.recordMs) return { action: "record", state: next };
    return { action: "post", state: next };
  }
  const attempts = state.attempts + 1;
  // This run of failures began with its first attempt (attempts resets on any success and on replay).
  const failingSince = attempts === 1 ? at.startedAt : (state.failingSince ?? at.startedAt);
  const next: SliceState = { ...state, attempts, failingSince, window: 1 };
  const suspend = suspension(outcome.failure, failingSince, at.now, limits.disableAfterMs);
  const decision = suspend
    ? ({ dead: true } as const)
    : nextRetry(attempts, parseRetryAfter(outcome.retryAfter, at.now), limits.retry, random);
  if (decision.dead) {
    const reason: SuspendReason = suspend ?? "attempts_exhausted";
    const error = suspensionError(reason, outcome.error, at.now - failingSince);
    return { action: "dead-letter", state: next, failure: { attempts, failingSince, error }, reason };
  }
  return {
    action: "park",
    state: next,
    failure: { attempts, failingSince, error: outcome.error },
    nextAttemptAt: at.now + decision.delayMs,
    firstFailure: attempts === 1,
  };
}

/** After a record: nothing unrecorded, and the next batch waits from now. */
export function recorded(state: SliceState, now: number): SliceState {
  return { ...state, unrecorded: 0, recordedAt: now };
}

/** What a slice does first with the subscription row it read, before it reads a batch. */
export type SliceMove = "stop" | "catch-up" | "park" | "read";

export function sliceMove(
  row: { active: boolean; deadAt: number | null; catchingUp: boolean; nextAttemptAt: number } | null,
  now: number,
): SliceMove {
  if (!row?.active || row.deadAt !== null) return "stop";
  // A resumed subscription refills what it missed first, so nothing later overtakes it.
  if (row.catchingUp) return "catch-up";
  if (row.nextAttemptAt > now) return "park";
  return "read";
}
