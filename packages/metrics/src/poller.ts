/** A periodic refresh of gauges that need a query (SQL, Kafka admin). */
export interface Poller {
  /** Runs one refresh now (tests, and the first value at start). */
  refresh(): Promise<void>;
  close(): void;
}

/**
 * Runs `refresh` every `intervalMs`, never two at once, so a scrape reads cached values and
 * never waits on Postgres or Kafka. A failed refresh keeps the previous values and is reported
 * once per change of state (failing / working again), not once per round.
 */
export function startPoller(intervalMs: number, refresh: () => Promise<void>, onError: (err: unknown, failing: boolean) => void): Poller {
  let running: Promise<void> | null = null;
  let failing = false;
  const once = (): Promise<void> => {
    running ??= refresh()
      .then(
        () => {
          if (failing) onError(null, false);
          failing = false;
        },
        (err: unknown) => {
          if (!failing) onError(err, true);
          failing = true;
        },
      )
      .finally(() => {
        running = null;
      });
    return running;
  };
  const timer = setInterval(() => void once(), intervalMs);
  timer.unref();
  void once();
  return { refresh: once, close: () => clearInterval(timer) };
}
