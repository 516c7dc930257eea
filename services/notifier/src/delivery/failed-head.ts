import type { DeliveryAttempt } from "@evb/storage";
import type { DeliveryRecorder, HeadFailed } from "./delivery-recorder.ts";
import type { SliceEnd } from "./delivery-slice.ts";
import type { Step } from "./delivery-step.ts";
import type { RunContext } from "./slice-run.ts";

type Park = Extract<Step, { action: "park" }>;
type DeadLetter = Extract<Step, { action: "dead-letter" }>;

/**
 * Writes a failed attempt at the head event of subscription `id` (the deliveries before it are
 * already recorded): the dead letter, which suspends delivery with the backlog kept until replay,
 * or the retry state, parking the job until the backoff ends. "idle" when the lease was lost.
 */
export async function writeFailure(
  c: RunContext,
  recorder: DeliveryRecorder,
  f: { id: string; step: Park | DeadLetter; attempt: DeliveryAttempt },
): Promise<SliceEnd> {
  const { deps, now } = c;
  const { step, attempt } = f;
  const { attempts, failingSince, error } = step.failure;
  const head: Omit<HeadFailed, "nextAttemptAt" | "deadAt"> = {
    attempts,
    failingSince,
    attempt: c.settings.logAttempts ? attempt : undefined,
    error,
    traceparent: attempt.traceparent,
  };
  const log = { subscriptionId: f.id, eventId: attempt.eventId, attempts, error: attempt.error };
  if (step.action === "dead-letter") {
    if (!(await recorder.failed({ ...head, nextAttemptAt: 0, deadAt: now() }))) return "idle";
    deps.observer?.suspended(step.reason);
    deps.logger.warn(
      { ...log, reason: step.reason, status: attempt.status, failingSince, event: "subscription_suspended" },
      "callback dead-lettered: delivery suspended until replay",
    );
    return "dead";
  }
  if (!(await recorder.failed({ ...head, nextAttemptAt: step.nextAttemptAt, deadAt: null }))) return "idle";
  const retry = { ...log, retryInMs: step.nextAttemptAt - now() };
  if (step.firstFailure) deps.logger.warn(retry, "callback failed; retrying with backoff");
  else deps.logger.debug(retry, "callback retry failed");
  return { parkUntil: step.nextAttemptAt };
}
