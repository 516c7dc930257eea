import { BrokerError, BrokerTransportError } from "./errors.ts";
import type { SendResult } from "./types.ts";

/** How a publish is retried (`publishWithRetry`). */
export interface RetryOptions {
  /** Tries in all, the first included; default 5. */
  attempts?: number;
  /** Wait before the second try, ms, doubling each time; default 200. */
  baseDelayMs?: number;
  /** Longest wait between two tries, ms; default 5000. */
  maxDelayMs?: number;
}

/** The E variant's answer to a publish not confirmed in time (L and M answer status TIMEOUT). */
const E_NOT_CONFIRMED = 200202;

/**
 * Whether a publish's outcome leaves it unknown whether the event was stored, so that sending it
 * again under the same idempotency key is the way to know: a TIMEOUT answer (E: 200202), no
 * connection, or no answer in time. Every other outcome is final: SUCCESS, a broker error that
 * refused it (100101 no such topic, 100211 key reused with other content…), an HTTP refusal, an
 * abort by the caller.
 */
export function outcomeUnknown(outcome: { result: SendResult } | { error: unknown }): boolean {
  if ("result" in outcome) return outcome.result.status === "TIMEOUT";
  const e = outcome.error;
  if (e instanceof BrokerTransportError) return e.failure === "network" || e.failure === "timeout";
  return e instanceof BrokerError && e.code === E_NOT_CONFIRMED;
}

/**
 * Runs `publish` until its outcome is known, at most `attempts` times, waiting `baseDelayMs`
 * doubling (at most `maxDelayMs`) between tries. Every try sends the same idempotency key, so the
 * broker stores the event once however many tries reached it. Resolves with the last answer, or
 * rejects with the last error; `sleep` is the wait (a test passes its own).
 */
export async function retryPublish(
  publish: () => Promise<SendResult>,
  o: RetryOptions & { sleep?: (ms: number) => Promise<void> } = {},
): Promise<SendResult> {
  const attempts = Math.max(1, o.attempts ?? 5);
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let delay = o.baseDelayMs ?? 200;
  for (let n = 1; ; n++) {
    let outcome: { result: SendResult } | { error: unknown };
    try {
      outcome = { result: await publish() };
    } catch (error) {
      outcome = { error };
    }
    if (n >= attempts || !outcomeUnknown(outcome)) {
      if ("error" in outcome) throw outcome.error;
      return outcome.result;
    }
    await sleep(delay);
    delay = Math.min(delay * 2, o.maxDelayMs ?? 5_000);
  }
}
