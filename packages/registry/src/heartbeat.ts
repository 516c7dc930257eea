import { errorMessage, type Logger } from "@evb/domain";

export interface HeartbeatOptions {
  /** Writes this node's registry entries; called every `intervalMs`. */
  beat: () => Promise<void>;
  /** Marks the node stopped on a clean close (best effort). */
  stopped?: () => Promise<void>;
  /** Interval between beats, ms. */
  intervalMs: number;
  /** What the log lines call this node. */
  name: string;
  logger: Logger;
}

/**
 * Keeps a node's registry entries fresh. The first beat is awaited by `start()`, so a service
 * that reports healthy is already listed. A failed beat (Redis down) is logged once and retried
 * every `RETRY_WHILE_FAILING_MS`, so that once Redis answers again the node is listed within a
 * fraction of a second rather than a whole interval later (after a Redis outage the gateways
 * stayed not ready for 2 s, waiting for the indexers' next beat, on the multi-host bed); the node
 * simply shows as inactive if the outage outlasts its stale limit.
 */
/** The pause between beats while they fail (ms); a beat at a silent Redis takes its own timeout anyway. */
const RETRY_WHILE_FAILING_MS = 250;

export class Heartbeat {
  private readonly opts: HeartbeatOptions;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private failing = false;
  private started?: Promise<void>;
  private closed?: Promise<void>;
  private soon = false;

  constructor(opts: HeartbeatOptions) {
    this.opts = opts;
  }

  start(): Promise<void> {
    this.started ??= this.tick();
    return this.started;
  }

  private tick(): Promise<void> {
    this.inFlight = this.opts.beat().then(
      () => {
        if (this.failing) this.opts.logger.info({ node: this.opts.name }, "registry heartbeat recovered");
        this.failing = false;
      },
      (err: unknown) => {
        if (!this.failing) this.opts.logger.warn({ node: this.opts.name, err: errorMessage(err) }, "registry heartbeat failed; retrying");
        this.failing = true;
      },
    );
    return this.inFlight.then(() => {
      if (this.closed) return;
      const pause = this.failing ? Math.min(RETRY_WHILE_FAILING_MS, this.opts.intervalMs) : this.opts.intervalMs;
      this.timer = setTimeout(() => void this.tick(), pause);
      this.timer.unref();
    });
  }

  /**
   * Beats as soon as the beat in flight (if any) is done, rather than at the next tick: what the
   * beat carries changed (an indexer that can seal again), and readers should not wait a whole
   * interval to hear it.
   */
  beatSoon(): void {
    if (!this.started || this.closed || this.soon) return;
    this.soon = true;
    void this.inFlight.then(() => {
      this.soon = false;
      if (this.closed) return;
      clearTimeout(this.timer);
      void this.tick();
    });
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      clearTimeout(this.timer);
      await this.inFlight;
      clearTimeout(this.timer);
      await this.opts
        .stopped?.()
        .catch((err: unknown) => this.opts.logger.warn({ node: this.opts.name, err: errorMessage(err) }, "could not mark node stopped"));
    })();
    return this.closed;
  }
}
