import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { z } from "zod";
import { errorMessage, type Logger, redisKeys } from "@evb/domain";
import type { DeliveryStore } from "@evb/storage";

export const QUEUE_NAME = "callbacks";

/** BullMQ job data: which subscription's backlog to drain. */
export const DeliveryJobData = z.object({ subscriptionId: z.string().min(1) });
export type DeliveryJobData = z.infer<typeof DeliveryJobData>;

export function bullPrefix(redisPrefix: string): string {
  return redisKeys(redisPrefix).bullPrefix;
}

/**
 * At most one BullMQ job per subscription (jobId = subscription id): adding a job for a
 * subscription that already has one (waiting, delayed for a retry, or running) does nothing, so
 * one subscription's events are never delivered by two workers at once, and they go in order.
 * Jobs are removed when they finish, so the next `ensure` can add a fresh one.
 */
export class DeliveryQueue {
  private readonly queue: Queue<DeliveryJobData>;
  private readonly store: DeliveryStore;
  private readonly logger: Logger;
  private readonly now: () => number;

  constructor(opts: { connection: Redis; redisPrefix: string; store: DeliveryStore; logger: Logger; now?: () => number }) {
    this.queue = new Queue<DeliveryJobData>(QUEUE_NAME, { connection: opts.connection, prefix: bullPrefix(opts.redisPrefix) });
    this.queue.on("error", (err) => opts.logger.warn({ err: errorMessage(err) }, "delivery queue error"));
    this.store = opts.store;
    this.logger = opts.logger;
    this.now = opts.now ?? Date.now;
  }

  /** Adds a job for each subscription that has none; `nextAttemptAt` delays a pending retry. */
  async ensure(entries: readonly { id: string; nextAttemptAt: number }[]): Promise<void> {
    if (entries.length === 0) return;
    const now = this.now();
    await this.queue.addBulk(
      entries.map((e) => ({
        name: "deliver",
        data: { subscriptionId: e.id },
        opts: { jobId: e.id, delay: Math.max(0, e.nextAttemptAt - now), removeOnComplete: true, removeOnFail: true },
      })),
    );
  }

  /** Ensures jobs for those of `ids` (or all) that are live, not dead-lettered and have a backlog. */
  async ensurePending(ids?: readonly string[]): Promise<number> {
    const pending = await this.store.pending(ids);
    await this.ensure(pending);
    if (ids === undefined && pending.length > 0) this.logger.debug({ count: pending.length }, "sweep ensured delivery jobs");
    return pending.length;
  }

  /**
   * A subscription was released or continued (gateway's wake message): ensure its job, and run a
   * job still parked for an old backoff now, since the row's retry state was reset.
   */
  async wake(ids: readonly string[]): Promise<void> {
    await this.ensurePending(ids);
    for (const id of ids) {
      const job = await this.queue.getJob(id);
      if (job && (await job.isDelayed())) await job.promote().catch(() => {});
    }
  }

  /** Whether any delivery job waits for a worker's slot. */
  async anyWaiting(): Promise<boolean> {
    return (await this.queue.getWaitingCount()) > 0;
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
