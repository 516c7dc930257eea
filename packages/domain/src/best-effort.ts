import { errorMessage, type Logger } from "./logger.ts";
import { TIMED_OUT, withTimeout } from "./with-timeout.ts";

export interface BestEffortOptions {
  /** What is written, for the log: "copy subscription counters". */
  what: string;
  /** What skipping it costs, for the log: "publishers may see TIMEOUT". */
  cost: string;
  timeoutMs: number;
  logger: Logger;
  /** Rethrow a failure (not a timeout) after logging it; the default skips it. */
  rethrow?: boolean;
}

/**
 * The one bounded best-effort Redis write (a hint or a cache copy): waits at most `timeoutMs`, so
 * a Redis stall never decides how long a request, a block or a delivery takes; logs what was
 * skipped and what that costs; never throws unless asked to. Postgres has already committed the
 * truth when this runs.
 */
export async function bestEffort(effect: () => Promise<unknown>, o: BestEffortOptions): Promise<void> {
  try {
    if ((await withTimeout(effect(), o.timeoutMs)) === TIMED_OUT)
      o.logger.warn({ what: o.what, timeoutMs: o.timeoutMs }, `Redis did not answer in time; skipped (${o.cost})`);
  } catch (err) {
    o.logger.warn({ what: o.what, err: errorMessage(err) }, `Redis write failed; skipped (${o.cost})`);
    if (o.rethrow) throw err;
  }
}
