import type { Logger } from "@evb/domain";
import type { DeliveryAttemptStore } from "@evb/storage";

export interface AttemptLogPrunerOptions {
  store: DeliveryAttemptStore;
  /** Attempts kept per subscription (DELIVERY_ATTEMPTS_KEEP). */
  keep: number;
  /** How long an attempt is kept, ms (DELIVERY_ATTEMPTS_KEEP_MS). */
  keepMs: number;
  intervalMs: number;
  logger: Logger;
  now?: () => number;
}

/**
 * Keeps the delivery-attempt log bounded: every `intervalMs` it deletes attempts older than
 * `keepMs` and, for the subscriptions this notifier delivered to since the last round, all but
 * their newest `keep` (each in bounded batches). Several notifiers prune side by side safely:
 * the deletes are idempotent.
 */
export class AttemptLogPruner {
  private readonly touched = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private readonly o: AttemptLogPrunerOptions;

  constructor(o: AttemptLogPrunerOptions) {
    this.o = o;
    this.timer = setInterval(() => void this.prune(), o.intervalMs);
    this.timer.unref();
  }

  /** A subscription got new attempts in the log. */
  touch(subscriptionId: string): void {
    this.touched.add(subscriptionId);
  }

  prune(): Promise<void> {
    this.running ??= (async () => {
      const ids = [...this.touched];
      this.touched.clear();
      try {
        const deleted = await this.o.store.prune((this.o.now ?? Date.now)() - this.o.keepMs, this.o.keep, ids);
        if (deleted > 0) this.o.logger.debug({ deleted }, "pruned the delivery-attempt log");
      } catch (err) {
        for (const id of ids) this.touched.add(id);
        this.o.logger.warn({ err }, "pruning the delivery-attempt log failed; next round retries");
      }
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
