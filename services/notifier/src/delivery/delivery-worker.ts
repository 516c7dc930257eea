import { DelayedError, type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { errorMessage, type Logger } from "@evb/domain";
import { bullPrefix, DeliveryJobData, type DeliveryQueue, QUEUE_NAME } from "./delivery-queue.ts";
import type { DeliverySlice } from "./delivery-slice.ts";

export interface DeliveryWorkerOptions {
  connection: Redis;
  redisPrefix: string;
  /** Re-checked for new backlog rows when a job completes. */
  queue: DeliveryQueue;
  /** Runs each job's slice (`DeliverySlice`, delivery-slice.ts). */
  slices: Pick<DeliverySlice, "run" | "notify">;
  /** Jobs (subscriptions) worked on at once by this process. */
  concurrency: number;
  /**
   * BullMQ lock of a running job, ms (DELIVERY_LOCK_MS, the slices' lease too): a killed
   * notifier's subscriptions are taken over after about this long.
   */
  lockMs: number;
  /**
   * The BullMQ run loop died (or ended without close()): this process no longer delivers
   * anything, although it looks alive. Called once; the notifier turns it into a failed /health
   * and a non-zero exit.
   */
  onFatal: (err: Error) => void;
  logger: Logger;
}

type Outcome = "idle" | "drained" | "yield" | "dead";

/**
 * Runs one BullMQ job per subscription (jobId = subscription id), each job one delivery slice
 * (delivery-slice.ts, deciding by delivery-step.ts): the backlog in order, under a Postgres
 * lease. A failed attempt parks the job in BullMQ's delayed set until the backoff ends (the slot
 * goes to other subscriptions meanwhile); a dead letter ends it. A notifier killed mid-POST
 * loses nothing: the job's lock expires, another worker takes it, and the unrecorded events are
 * sent again (at least once).
 */
export class DeliveryWorker {
  private readonly worker: Worker<DeliveryJobData, Outcome>;
  private readonly o: DeliveryWorkerOptions;
  private closing = false;
  private rechecks: string[] = [];

  constructor(o: DeliveryWorkerOptions) {
    this.o = o;
    // Three parameters: BullMQ then hands each job an AbortSignal, which fires on cancelJob().
    this.worker = new Worker<DeliveryJobData, Outcome>(QUEUE_NAME, (job, token, signal) => this.process(job, token, signal), {
      connection: o.connection,
      prefix: bullPrefix(o.redisPrefix),
      concurrency: o.concurrency,
      lockDuration: o.lockMs,
      stalledInterval: o.lockMs,
      // A stalled job must always come back: failing it would strand the backlog until the sweep.
      maxStalledCount: 1_000_000,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
      autorun: false,
    });
    this.worker.on("error", (err) => o.logger.warn({ err: errorMessage(err) }, "delivery worker error"));
    // Another notifier may already run these jobs: stop their slices (the Postgres lease fences
    // any write they still attempt).
    this.worker.on("lockRenewalFailed", (ids) => {
      o.logger.warn({ subscriptions: ids }, "lost the BullMQ lock of running deliveries; stopping them");
      for (const id of ids) this.worker.cancelJob(id, "BullMQ lock lost");
    });
    this.worker.on("failed", (job, err) =>
      o.logger.warn({ subscriptionId: job?.id, err: errorMessage(err) }, "delivery job failed; the sweep retries it"),
    );
    // The job is gone once 'completed' fires. Events matched while it was finishing found the job
    // still there and added nothing, so look again now that a new job can be added.
    // Jobs completing in the same turn of the event loop are re-checked in one query.
    this.worker.on("completed", (job) => this.recheck(job.data.subscriptionId));
  }

  start(): void {
    // BullMQ's run loop rejects when a job's completion fails with a non-connection error (e.g.
    // "Missing lock for job" once its lock was lost); nothing restarts it, so it must not go
    // unnoticed.
    this.worker.run().then(
      () => {
        if (!this.closing) this.o.onFatal(new Error("the BullMQ run loop ended without close()"));
      },
      (err: unknown) => {
        if (this.closing) this.o.logger.warn({ err: errorMessage(err) }, "delivery worker stopped while closing");
        else this.o.onFatal(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  /**
   * The dispatcher of this process matched new events for these subscriptions: a slice running
   * for one of them reads its backlog again before it ends, instead of ending and waiting for a
   * new job. Returns the ids that had no slice running here (those need a job).
   */
  notify(ids: readonly string[]): string[] {
    return this.o.slices.notify(ids);
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.worker.close();
  }

  private recheck(id: string): void {
    this.rechecks.push(id);
    if (this.rechecks.length > 1) return;
    setImmediate(() => {
      const ids = this.rechecks;
      this.rechecks = [];
      this.o.queue.ensurePending(ids).catch((err: Error) => this.o.logger.warn({ err: errorMessage(err) }, "re-check after job failed"));
    });
  }

  private async process(job: Job<DeliveryJobData, Outcome>, token: string | undefined, signal?: AbortSignal): Promise<Outcome> {
    const { subscriptionId: id } = DeliveryJobData.parse(job.data);
    const end = await this.o.slices.run(id, signal);
    if (typeof end === "object") return this.park(job, token, end.parkUntil);
    return end;
  }

  /** Moves the job to BullMQ's delayed set until `at`; the slot is free meanwhile. */
  private async park(job: Job<DeliveryJobData, Outcome>, token: string | undefined, at: number): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }
}
