import { errorMessage, type Logger } from "@evb/domain";
import type { LogConsumer, TopicPartitionOffset } from "./ports.ts";

export interface OffsetCommitterOptions {
  logger: Logger;
  /** Least time between two commit requests (ms); what is noted meanwhile goes in the next. */
  minIntervalMs: number;
  now: () => number;
  /** How long each commit request took (seconds). */
  timed?: (seconds: number) => void;
}

/**
 * Commits sealed positions to Kafka off the batch path: one commit request in flight at a time,
 * at most one per `minIntervalMs`, the positions noted meanwhile merged into the next (the
 * highest per partition).
 *
 * Nothing waits for it because the ledger, not the consumer group, says where each partition
 * continues (the consumer seeks to the ledger's positions on assignment, and a batch below them
 * is skipped by the planner). The committed offsets only let a fetch start close by and witness
 * what was sealed; they are noted after the database commit and the chain record, so they never
 * run ahead of the ledger. A lost or late commit (a rebalance, a crash) costs nothing.
 */
export class OffsetCommitter {
  private readonly o: OffsetCommitterOptions;
  private readonly pending = new Map<LogConsumer, Map<string, TopicPartitionOffset>>();
  private running?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private lastAt = Number.NEGATIVE_INFINITY;

  constructor(o: OffsetCommitterOptions) {
    this.o = o;
  }

  note(consumer: LogConsumer, positions: readonly TopicPartitionOffset[]): void {
    if (positions.length === 0) return;
    const mine = this.pending.get(consumer) ?? new Map<string, TopicPartitionOffset>();
    for (const p of positions) {
      const key = `${p.topic}:${p.partition}`;
      if ((mine.get(key)?.offset ?? -1) < p.offset) mine.set(key, p);
    }
    this.pending.set(consumer, mine);
    this.schedule();
  }

  private schedule(): void {
    if (this.running || this.timer || this.pending.size === 0) return;
    const wait = this.lastAt + this.o.minIntervalMs - this.o.now();
    if (wait <= 0) {
      this.running = this.flush();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, wait);
    this.timer.unref?.();
  }

  private async flush(): Promise<void> {
    const all = [...this.pending];
    this.pending.clear();
    this.lastAt = this.o.now();
    for (const [consumer, positions] of all) {
      const started = performance.now();
      await consumer.commit([...positions.values()]).catch((err) => {
        this.o.logger.debug({ err: errorMessage(err) }, "could not commit Kafka offsets (harmless: positions come from the ledger)");
      });
      this.o.timed?.((performance.now() - started) / 1000);
    }
    this.running = undefined; // in the same turn as the next check
    this.schedule();
  }

  /** Commits what is noted now, without waiting for the interval, and waits until it is done. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.running ??= this.flush();
      }
      if (!this.running) return;
      await this.running;
    }
  }
}
