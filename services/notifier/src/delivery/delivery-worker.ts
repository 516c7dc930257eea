import { DelayedError, type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "@evb/domain";
import type { SubscriptionStats } from "@evb/storage";
import { bullPrefix, DeliveryJobData, type DeliveryQueue, QUEUE_NAME } from "./delivery-queue.ts";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import type { CallbackPoster, CallbackSigner } from "./callback-flight.ts";
import { type DeliveryObserver, DeliverySlice } from "./delivery-slice.ts";
import type { RetryPolicy } from "./retry-policy.ts";

export interface DeliveryWorkerOptions {
  connection: Redis;
  redisPrefix: string;
  /** The delivery port of Postgres (`DeliveryStore` in production). */
  ledger: DeliveryLedger;
  queue: DeliveryQueue;
  transport: CallbackPoster;
  signer: CallbackSigner;
  retry: RetryPolicy;
  /**
   * A subscription failing without a success for this long (ms, DELIVERY_DISABLE_AFTER_MS) is
   * suspended even with retries left.
   */
  disableAfterMs: number;
  /** Whether each attempt goes to the delivery-attempt log (written with the delivery records). */
  logAttempts: boolean;
  /** Told about every attempt and suspension (metrics). */
  observer?: DeliveryObserver;
  /** Jobs (subscriptions) worked on at once by this process. */
  concurrency: number;
  /**
   * BullMQ lock of a running job and Postgres lease of its slice, ms: a killed notifier's
   * subscriptions are taken over after about this long.
   */
  lockMs: number;
  /** The longest one callback attempt may take (DELIVERY_TIMEOUT_MS): a POST starts only with this much lease left. */
  attemptMs: number;
  /**
   * Delivered events recorded together (one Postgres statement) (DELIVERY_RECORD_EVENTS): a
   * crash re-sends at most this many of a subscription's events.
   */
  recordEvents: number;
  /** Deliveries per job run before the job yields its slot to other subscriptions (when any wait). */
  sliceEvents: number;
  /**
   * Time per job run, ms, after which the job yields its slot once the current delivery is
   * recorded: a receiver that answers slowly but successfully holds a slot for about this long,
   * not for sliceEvents × the attempt timeout.
   */
  sliceMs: number;
  /** Callbacks of one subscription in flight at once (DELIVERY_WINDOW); 1 sends each after the previous 2xx. */
  window: number;
  onStats: (stats: SubscriptionStats[]) => Promise<void>;
  /**
   * The BullMQ run loop died (or ended without close()): this process no longer delivers
   * anything, although it looks alive. Called once; the notifier turns it into a failed /health
   * and a non-zero exit.
   */
  onFatal: (err: Error) => void;
  logger: Logger;
  now?: () => number;
  random?: () => number;
}

type Outcome = "idle" | "drained" | "yield" | "dead";
/**
 * Delivered events wait at most this long (ms, checked after each delivery) to be recorded, so
 * a slowly answering receiver's progress is not held back for a whole batch.
 */
const RECORD_MS = 200;

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
  private readonly slices: DeliverySlice;
  private closing = false;
  private rechecks: string[] = [];

  constructor(o: DeliveryWorkerOptions) {
    this.o = o;
    this.slices = new DeliverySlice({
      ledger: o.ledger,
      transport: o.transport,
      signer: o.signer,
      limits: {
        retry: o.retry,
        disableAfterMs: o.disableAfterMs,
        recordEvents: o.recordEvents,
        recordMs: RECORD_MS,
        sliceEvents: o.sliceEvents,
        window: o.window,
      },
      logAttempts: o.logAttempts,
      lockMs: o.lockMs,
      attemptMs: o.attemptMs,
      sliceMs: o.sliceMs,
      onStats: o.onStats,
      othersWaiting: () => o.queue.anyWaiting(),
      observer: o.observer,
      logger: o.logger,
      now: o.now,
      random: o.random,
    });
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
    this.worker.on("error", (err) => o.logger.warn({ err: err.message }, "delivery worker error"));
    // Another notifier may already run these jobs: stop their slices (the Postgres lease fences
    // any write they still attempt).
    this.worker.on("lockRenewalFailed", (ids) => {
      o.logger.warn({ subscriptions: ids }, "lost the BullMQ lock of running deliveries; stopping them");
      for (const id of ids) this.worker.cancelJob(id, "BullMQ lock lost");
    });
    this.worker.on("failed", (job, err) =>
      o.logger.warn({ subscriptionId: job?.id, err: err.message }, "delivery job failed; the sweep retries it"),
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
        if (this.closing) this.o.logger.warn({ err: String(err) }, "delivery worker stopped while closing");
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
    return this.slices.notify(ids);
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
      this.o.queue.ensurePending(ids).catch((err: Error) => this.o.logger.warn({ err: err.message }, "re-check after job failed"));
    });
  }

  private async process(job: Job<DeliveryJobData, Outcome>, token: string | undefined, signal?: AbortSignal): Promise<Outcome> {
    const { subscriptionId: id } = DeliveryJobData.parse(job.data);
    const end = await this.slices.run(id, signal);
    if (typeof end === "object") return this.park(job, token, end.parkUntil);
    return end;
  }

  /** Moves the job to BullMQ's delayed set until `at`; the slot is free meanwhile. */
  private async park(job: Job<DeliveryJobData, Outcome>, token: string | undefined, at: number): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }
}
