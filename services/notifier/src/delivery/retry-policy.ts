import { type CallbackFailureKind, suspendsAtOnce } from "@evb/domain";

/** Retry schedule of a failing callback; see docs/delivery.md. */
export interface RetryPolicy {
  /** Delay before the first retry, ms; doubles per failed attempt. */
  baseMs: number;
  /** Cap of the exponential delay, ms. */
  maxMs: number;
  /** Failed attempts of one event after which it is dead-lettered. */
  maxAttempts: number;
  /** Cap on a receiver's Retry-After, ms. */
  retryAfterMaxMs: number;
}

/**
 * Exponential backoff with "equal jitter": attempt n waits between half and all of
 * min(maxMs, baseMs·2^(n−1)), so retries of many subscriptions failing together spread out but
 * never come sooner than half the schedule. `random` is in [0, 1).
 */
export function backoffMs(attempt: number, policy: Pick<RetryPolicy, "baseMs" | "maxMs">, random: number): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 40));
  return Math.round(exp / 2 + (exp / 2) * random);
}

/**
 * Retry-After as delta-seconds ("120") or an HTTP date, in ms from `nowMs`; null when absent or
 * unparseable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  if (!/[a-z]/i.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

export type RetryDecision = { dead: true } | { dead: false; delayMs: number };

/**
 * What to do after the `attempts`-th failed attempt of an event: dead-letter it once the budget
 * is spent; otherwise wait the receiver's Retry-After (clamped to [0, retryAfterMaxMs]) when it
 * sent one, else the jittered backoff.
 */
export function nextRetry(attempts: number, retryAfterMs: number | null, policy: RetryPolicy, random: number): RetryDecision {
  if (attempts >= policy.maxAttempts) return { dead: true };
  if (retryAfterMs !== null) return { dead: false, delayMs: Math.min(Math.max(retryAfterMs, 0), policy.retryAfterMaxMs) };
  return { dead: false, delayMs: backoffMs(attempts, policy, random) };
}

/** Why a subscription's delivery was suspended (the dead-letter reason, and a metric label). */
export type SuspendReason = "gone" | "failing_too_long" | "attempts_exhausted";

/**
 * Endpoint health (the Standard Webhooks guidance): a receiver answering 410 Gone asked to stop
 * (the kind GONE, see packages/domain/src/http-failure.ts), so its subscription is suspended at
 * once; one that has failed without a single success for `disableAfterMs` (since `failingSince`)
 * is suspended even with retries left. Null: keep to the retry schedule.
 */
export function suspension(
  failure: CallbackFailureKind,
  failingSince: number,
  nowMs: number,
  disableAfterMs: number,
): SuspendReason | null {
  if (suspendsAtOnce(failure)) return "gone";
  if (nowMs - failingSince >= disableAfterMs) return "failing_too_long";
  return null;
}

/** The dead-letter text (last_error) of a suspension. */
export function suspensionError(reason: SuspendReason, lastError: string, failingForMs: number): string {
  if (reason === "gone") return `suspended: the receiver answered 410 Gone (${lastError})`;
  if (reason === "failing_too_long")
    return `suspended: failing without a success for ${Math.round(failingForMs / 1000)} s (last: ${lastError})`;
  return lastError;
}
