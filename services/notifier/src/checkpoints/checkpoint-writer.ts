import {
  checkpointKey,
  type DeliveryCheckpoint,
  encodeSubscriptionEntry,
  errorMessage,
  type Logger,
  subscriptionsTopicName,
  TIMED_OUT,
  withTimeout,
} from "@evb/domain";
import type { DeliveredCursor } from "@evb/storage";

/**
 * How far back, beyond the last run, a run asks for deliveries: `notified_at` is written with
 * each notifier's own clock, so a notifier whose clock is behind records times in the past.
 */
const CLOCK_MARGIN_MS = 60_000;

/** Checkpoint messages per Kafka write. */
const WRITE_CHUNK = 500;

/** Where the delivery cursors are read (`SubscriptionRecords`: Postgres). */
interface DeliveredCursors {
  /** The delivery cursors of subscriptions that delivered since a time. */
  deliveredSince(sinceMs: number): Promise<DeliveredCursor[]>;
}

/** Where the checkpoints are written (`ChainLogWriter`: the subscriptions topics). */
interface CheckpointLog {
  /** Writes keyed messages to a subscriptions topic and resolves once Kafka has them. */
  writeMessages(topic: string, messages: { key: string; value: Buffer }[]): Promise<void>;
}

export interface CheckpointWriterOptions {
  cursors: DeliveredCursors;
  topics: CheckpointLog;
  topicPrefix: string;
  /** DELIVERY_CHECKPOINT_MS: between runs, and the bound of one run's Kafka writes. */
  intervalMs: number;
  logger: Logger;
  now: () => number;
}

/**
 * Writes where each subscription's delivery stands to its group's subscriptions topic, every
 * `intervalMs`, for the subscriptions whose cursor moved since the last checkpoint this notifier
 * wrote: a rebuilt ledger resumes their callbacks from there (docs/ledger.md). A cursor is read
 * from Postgres after its delivery was recorded, so a checkpoint is never ahead of a delivery:
 * a late or failed checkpoint only means more callbacks sent again, never one skipped. Several
 * notifiers may write the same checkpoint; that costs a message, nothing else.
 */
export class CheckpointWriter {
  private readonly o: CheckpointWriterOptions;
  private readonly written = new Map<string, string>();
  private lastRunAt: number | null = null;
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private failing = false;
  private closed = false;

  constructor(o: CheckpointWriterOptions) {
    this.o = o;
  }

  start(): void {
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce().finally(() => this.schedule());
    }, this.o.intervalMs);
    this.timer.unref?.();
  }

  /** One run: the moved cursors, written per group; true when all were written (or none moved). */
  async runOnce(): Promise<boolean> {
    const startedAt = this.o.now();
    const since = this.lastRunAt === null ? 0 : this.lastRunAt - this.o.intervalMs - CLOCK_MARGIN_MS;
    try {
      const moved = (await this.o.cursors.deliveredSince(since)).filter((c) => this.written.get(c.id) !== positionOf(c));
      const byGroup = Map.groupBy(moved, (c) => c.groupId);
      for (const [groupId, cursors] of byGroup) await this.writeGroup(groupId, cursors, startedAt);
      this.lastRunAt = startedAt;
      if (this.failing) this.o.logger.info("delivery checkpoints are written to Kafka again");
      this.failing = false;
      return true;
    } catch (err) {
      if (!this.failing)
        this.o.logger.warn(
          { err: errorMessage(err) },
          "could not write delivery checkpoints; retried every interval (after a lost ledger, callbacks since the last checkpoint are sent again)",
        );
      this.failing = true;
      return false;
    }
  }

  private async writeGroup(groupId: string, cursors: readonly DeliveredCursor[], atMs: number): Promise<void> {
    const topic = subscriptionsTopicName(this.o.topicPrefix, groupId);
    for (let i = 0; i < cursors.length; i += WRITE_CHUNK) {
      const chunk = cursors.slice(i, i + WRITE_CHUNK);
      const messages = chunk.map((c) => {
        const checkpoint: DeliveryCheckpoint = {
          v: 1,
          kind: "checkpoint",
          groupId,
          id: c.id,
          delivered: c.delivered,
          deliveredCount: c.deliveredCount,
          atMs,
        };
        return { key: checkpointKey(c.id), value: encodeSubscriptionEntry(checkpoint) };
      });
      if ((await withTimeout(this.o.topics.writeMessages(topic, messages), this.o.intervalMs * 2)) === TIMED_OUT) {
        throw new Error(`Kafka did not take ${messages.length} checkpoints of group ${groupId} within ${this.o.intervalMs * 2} ms`);
      }
      for (const c of chunk) this.written.set(c.id, positionOf(c));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }
}

function positionOf(c: DeliveredCursor): string {
  return `${c.delivered.height}/${c.delivered.idx}/${c.deliveredCount}`;
}
