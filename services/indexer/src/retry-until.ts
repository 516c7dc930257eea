export interface RetryUntilOptions {
  /** One attempt; resolves when it succeeded. */
  attempt: () => Promise<void>;
  /** Checked before each attempt: true stops without trying again. */
  stopped: () => boolean;
  /** Stop retrying once this long has passed since the first attempt (ms). */
  giveUpMs: number;
  onRetry: (err: unknown, retryInMs: number) => void;
  onGiveUp: (err: unknown) => void;
  now: () => number;
  /** Wait before the first attempt, doubled after each failure up to `maxDelayMs` (ms). */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Runs before every attempt (e.g. closing what the failed one left). */
  before?: () => Promise<void>;
}

/** Tries `attempt` with exponential backoff until it succeeds, the caller stops, or `giveUpMs` passes. */
export async function retryUntil(o: RetryUntilOptions): Promise<boolean> {
  const since = o.now();
  let delayMs = o.firstDelayMs ?? 1_000;
  for (;;) {
    await o.before?.();
    if (o.stopped()) return false;
    await new Promise((r) => setTimeout(r, delayMs));
    if (o.stopped()) return false;
    try {
      await o.attempt();
      return true;
    } catch (err) {
      if (o.now() - since > o.giveUpMs) {
        o.onGiveUp(err);
        return false;
      }
      o.onRetry(err, delayMs);
      delayMs = Math.min(delayMs * 2, o.maxDelayMs ?? 30_000);
    }
  }
}
