import type { Logger } from "@evb/domain";
import type { DeliveryAttempt, ResendItem, ResendOutcome, SubscriptionRow } from "@evb/storage";
import { type CallbackPoster, type CallbackSigner, startFlight } from "./callback-flight.ts";
import type { CallbackShape } from "./own-settings.ts";
import { backoffMs, type RetryPolicy } from "./retry-policy.ts";
import type { SliceLease } from "./slice-lease.ts";

/** What sending resends takes from the slice (its RunContext has all of it). */
export interface ResendContext {
  deps: {
    transport: CallbackPoster;
    signer: CallbackSigner;
    observer?: { attempt(subscriptionId: string, result: { delivered: boolean; status: number | null }, ms: number): void };
    attemptLog?: { touch(subscriptionId: string): void };
    logger: Logger;
  };
  settings: { limits: { retry: RetryPolicy }; logAttempts: boolean };
  now: () => number;
  random: () => number;
}

/** What a slice needs for resends (`ResendStore` in production): the due ones, and each attempt's outcome under the lease. */
export interface ResendLedger {
  due(subscriptionId: string, now: number, limit: number): Promise<ResendItem[]>;
  settle(subscriptionId: string, token: number, o: ResendOutcome): Promise<boolean>;
}

/** Resends sent per slice at most, before the backlog's turn. */
const RESENDS_PER_SLICE = 16;

/**
 * What one resend attempt leads to, purely: a 2xx settles it; a failure waits the retry backoff
 * of its attempt count, until the retry budget (RETRY_MAX_ATTEMPTS) is spent and it is dropped.
 * A resend never suspends the subscription: it is an extra, out of order.
 */
export function resendOutcome(
  item: Pick<ResendItem, "resendId" | "attempts">,
  delivered: boolean,
  at: { now: number; random: number },
  retry: { baseMs: number; maxMs: number; maxAttempts: number },
): ResendOutcome {
  if (delivered) return { resendId: item.resendId, done: true, attempts: item.attempts, nextAttemptAt: 0 };
  const attempts = item.attempts + 1;
  if (attempts >= retry.maxAttempts) return { resendId: item.resendId, done: true, attempts, nextAttemptAt: 0 };
  return { resendId: item.resendId, done: false, attempts, nextAttemptAt: at.now + backoffMs(attempts, retry, at.random) };
}

/**
 * Sends the subscription's due resends (admin/resendEvent), one at a time, before its backlog:
 * the callback body of any delivery, marked as a resend by the signer, through the same transport
 * (address checks) and into the attempt log. Stops at the first failure (the receiver is failing;
 * the resend waits for its backoff) and returns false when the lease was lost (nothing more may be
 * written by this slice).
 */
export async function sendResends(
  c: ResendContext,
  ledger: ResendLedger,
  lease: SliceLease,
  sub: SubscriptionRow,
  to: { signal: AbortSignal | undefined } & Partial<CallbackShape>,
): Promise<boolean> {
  const { signal, keys, headers, bodyMode } = to;
  const { deps, settings, now, random } = c;
  const due = await ledger.due(sub.id, now(), RESENDS_PER_SLICE);
  for (const item of due) {
    await lease.keep(signal);
    const flight = startFlight(deps, now, {
      id: sub.id,
      item,
      url: sub.url,
      variant: sub.bodyVariant,
      signal,
      resend: item.resendId,
      keys,
      headers,
      bodyMode,
    });
    const { result, endedAt } = await flight.result;
    const ms = endedAt - flight.startedAt;
    deps.observer?.attempt(sub.id, result, ms);
    deps.attemptLog?.touch(sub.id);
    const attempt: DeliveryAttempt = {
      eventId: item.eventId,
      at: flight.startedAt,
      durationMs: ms,
      status: result.status,
      error: result.delivered ? null : `resend: ${result.error}`,
      excerpt: result.excerpt,
    };
    const outcome = resendOutcome(item, result.delivered, { now: now(), random: random() }, settings.limits.retry);
    if (!(await ledger.settle(sub.id, lease.token, { ...outcome, attempt: settings.logAttempts ? attempt : undefined }))) return false;
    const log = { subscriptionId: sub.id, eventId: item.eventId, resend: item.resendId, attempts: outcome.attempts };
    if (result.delivered) deps.logger.info(log, "event resent");
    else if (outcome.done) deps.logger.warn({ ...log, error: result.error }, "event resend given up: retry budget spent");
    if (!result.delivered) return true;
  }
  return true;
}
