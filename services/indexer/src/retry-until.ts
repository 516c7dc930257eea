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
  /** An attempt not settled within this long fails ("took longer than …"), and the next one starts (ms). */
  attemptTimeoutMs?: number;
  /** The wait between attempts; the caller's may end early (the dependency is back). */
  wait?: (ms: number) => Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `attempt()`, failed once it outlives `ms` (its late outcome is ignored). */
async function bounded(attempt: () => Promise<void>, ms: number | undefined): Promise<void> {
  if (ms === undefined) return attempt();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the attempt did not finish within ${ms} ms`)), ms);
  });
  const run = attempt();
  run.catch(() => {});
  try {
    await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Tries `attempt` with exponential backoff until it succeeds, the caller stops, or `giveUpMs` passes. */
export async function retryUntil(o: RetryUntilOptions): Promise<boolean> {
  const since = o.now();
  let delayMs = o.firstDelayMs ?? 1_000;
  for (;;) {
    await o.before?.();
    if (o.stopped()) return false;
    await (o.wait ?? sleep)(delayMs);
    if (o.stopped()) return false;
    try {
      await bounded(o.attempt, o.attemptTimeoutMs);
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
