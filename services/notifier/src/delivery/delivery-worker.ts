import { DelayedError, type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { type Logger, ServiceError } from "@evb/domain";
import type { BacklogItem, DeliveryAttempt, DeliveryStore, SubscriptionStats } from "@evb/storage";
import { callbackBody } from "./callback-body.ts";
import type { CallbackTransport } from "./callback-transport.ts";
import { bullPrefix, DeliveryJobData, type DeliveryQueue, QUEUE_NAME } from "./delivery-queue.ts";
import { nextRetry, parseRetryAfter, type RetryPolicy, type SuspendReason, suspension, suspensionError } from "./retry-policy.ts";
import type { WebhookSigner } from "./webhook-signer.ts";

export interface DeliveryWorkerOptions {
  connection: Redis;
  redisPrefix: string;
  store: DeliveryStore;
  queue: DeliveryQueue;
  transport: CallbackTransport;
  signer: WebhookSigner;
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
  /** Deliveries per job run before the job yields its slot to other subscriptions. */
  sliceEvents: number;
  /**
   * Time per job run, ms, after which the job yields its slot once the current delivery is
   * recorded: a receiver that answers slowly but successfully holds a slot for about this long,
   * not for sliceEvents × the attempt timeout.
   */
  sliceMs: number;
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

/** What the worker reports as it goes; the notifier turns it into metrics. */
export interface DeliveryObserver {
  /** One callback attempt to `subscriptionId` ended (`ms`: how long it took). */
  attempt(subscriptionId: string, result: { delivered: boolean; status: number | null }, ms: number): void;
  /** An event was delivered (2xx), `sealedAt` being its block's seal time (epoch ms). */
  delivered(sealedAt: number): void;
  /** A subscription was suspended until replay. */
  suspended(reason: SuspendReason): void;
}

type Outcome = "idle" | "drained" | "yield" | "dead";
/**
 * Delivered events wait at most this long (ms, checked after each delivery) to be recorded, so
 * a slowly answering receiver's progress is not held back for a whole batch.
 */
const RECORD_MS = 200;
/** Backlog events read at once (at least; more when DELIVERY_RECORD_EVENTS is larger). */
const READ_EVENTS = 50;
/** How soon a job finding the subscription leased elsewhere looks again, at most (ms). */
const LEASE_POLL_MS = 1_000;

/**
 * Drains one subscription's backlog per job, strictly in order: the head event is POSTed until a
 * 2xx, and only then the next. A failed attempt records the retry state in Postgres and parks the
 * job in BullMQ's delayed set until the backoff ends (the slot goes to other subscriptions
 * meanwhile); the last allowed failure dead-letters the head and suspends the subscription with
 * its backlog intact until replay. A notifier killed mid-POST loses nothing: the job's lock
 * expires, another worker takes it, and the unacknowledged event is sent again (at least once).
 */
export class DeliveryWorker {
  private readonly worker: Worker<DeliveryJobData, Outcome>;
  private readonly o: DeliveryWorkerOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private closing = false;

  constructor(o: DeliveryWorkerOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.random = o.random ?? Math.random;
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
    this.worker.on("completed", (job) => {
      this.o.queue
        .ensurePending([job.data.subscriptionId])
        .catch((err: Error) => o.logger.warn({ err: err.message }, "re-check after job failed"));
    });
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

  async close(): Promise<void> {
    this.closing = true;
    await this.worker.close();
  }

  private async process(job: Job<DeliveryJobData, Outcome>, token: string | undefined, signal?: AbortSignal): Promise<Outcome> {
    const { subscriptionId: id } = DeliveryJobData.parse(job.data);
    const { store, logger } = this.o;
    const sub = await store.subscription(id);
    if (!sub?.active || sub.deadAt !== null) return "idle";
    // A Postgres lease fences this slice. Held by another notifier: that one still runs a slice
    // of this subscription (it lost its BullMQ lock but not its work); look again soon.
    const leasedAt = this.now();
    const lease = await store.lease(id, this.o.lockMs);
    if (!lease.ok) {
      logger.debug({ subscriptionId: id, retryInMs: lease.retryInMs }, "subscription leased by another notifier; waiting");
      return this.park(job, token, this.now() + Math.min(Math.max(lease.retryInMs, 50), LEASE_POLL_MS));
    }
    let end: Outcome | { parkUntil: number };
    try {
      end = await this.slice(id, { token: lease.token, expires: leasedAt + this.o.lockMs }, signal);
    } finally {
      await store
        .release(id, lease.token)
        .catch((err: Error) => logger.warn({ subscriptionId: id, err: err.message }, "lease release failed"));
    }
    if (typeof end === "object") return this.park(job, token, end.parkUntil);
    return end;
  }

  /**
   * Delivers the backlog head by head under the lease. Before each POST the lease must have at
   * least one attempt's time left on this process's clock (renewed otherwise), so a POST never
   * outlives it; every record checks the token. Stops when BullMQ says the job's lock is lost
   * (`signal`) or the lease is gone: another notifier is taking over.
   */
  private async slice(
    id: string,
    lease: { token: number; expires: number },
    signal?: AbortSignal,
  ): Promise<Outcome | { parkUntil: number }> {
    const { store, transport, signer, logger } = this.o;
    let sent = 0;
    const sliceEnds = this.now() + this.o.sliceMs;
    const keep = async () => {
      if (signal?.aborted) throw leaseLost(id, "its BullMQ lock was lost");
      if (lease.expires - this.now() > this.o.attemptMs) return;
      const at = this.now();
      if (!(await store.renew(id, lease.token, this.o.lockMs))) throw leaseLost(id, "its lease was taken over");
      lease.expires = at + this.o.lockMs;
    };
    for (;;) {
      const sub = await store.subscription(id);
      if (!sub?.active || sub.deadAt !== null) return "idle";
      if (sub.catchingUp) {
        // A resumed subscription: refill what it missed first (page by page), then deliver, so
        // nothing published later (already in the backlog) overtakes it.
        await keep();
        const at = this.now();
        const page = await store.catchUp(id, lease.token, this.o.lockMs);
        if (!page) return "idle";
        lease.expires = at + this.o.lockMs;
        await this.o.onStats([page.stats]);
        if (!page.done && this.now() >= sliceEnds) return "yield";
        continue;
      }
      if (sub.nextAttemptAt > this.now()) return { parkUntil: sub.nextAttemptAt };
      // Delivered events are recorded together (see `record`): every recordEvents of them, every
      // RECORD_MS, at the end of each batch read (so the next read starts after them), and
      // before anything else is written or the slice ends.
      const batch = await store.backlog(id, Math.max(this.o.recordEvents, READ_EVENTS));
      if (batch.length === 0) return "drained";
      const done: BacklogItem[] = [];
      const logged: DeliveryAttempt[] = [];
      let since = this.now();
      let attempts = sub.attempts;
      // false: the subscription was unsubscribed or the lease taken over; not ours to go on.
      const record = async (): Promise<boolean> => {
        if (done.length === 0) return true;
        const at = this.now();
        const stats = await store.deliveredBatch({
          id,
          token: lease.token,
          events: done.map((e) => ({ height: e.height, idx: e.idx })),
          attempts: logged,
          now: at,
          leaseMs: this.o.lockMs,
        });
        done.length = 0;
        logged.length = 0;
        since = this.now();
        if (!stats) return false;
        lease.expires = at + this.o.lockMs;
        await this.o.onStats([stats]);
        return true;
      };
      try {
        for (const item of batch) {
          await keep();
          const body = callbackBody(id, item, sub.bodyVariant);
          const startedAt = this.now();
          const result = await transport.post(sub.url, body, signer.headers(id, item.eventId, body, startedAt), signal);
          const ms = this.now() - startedAt;
          if (signal?.aborted) throw leaseLost(id, "its BullMQ lock was lost");
          this.o.observer?.attempt(id, result, ms);
          const attempt: DeliveryAttempt = {
            eventId: item.eventId,
            at: startedAt,
            durationMs: ms,
            status: result.status,
            error: result.delivered ? null : result.error,
            excerpt: result.excerpt,
          };
          if (result.delivered) {
            done.push(item);
            if (this.o.logAttempts) logged.push(attempt);
            this.o.observer?.delivered(item.sealedAt);
            if (attempts > 0) logger.info({ subscriptionId: id, eventId: item.eventId, attempts }, "callback delivered after retries");
            attempts = 0;
            if (++sent >= this.o.sliceEvents || this.now() >= sliceEnds) return (await record()) ? "yield" : "idle";
            if ((done.length >= this.o.recordEvents || this.now() - since >= RECORD_MS) && !(await record())) return "idle";
            continue;
          }
          if (!(await record())) return "idle";
          attempts += 1;
          // This run of failures began with its first attempt (attempts resets on any success and on replay).
          const failingSince = attempts === 1 ? startedAt : (sub.failingSince ?? startedAt);
          const now = this.now();
          const suspend = suspension(result.status, failingSince, now, this.o.disableAfterMs);
          const decision = suspend
            ? ({ dead: true } as const)
            : nextRetry(attempts, parseRetryAfter(result.retryAfter, now), this.o.retry, this.random());
          const log = { subscriptionId: id, eventId: item.eventId, attempts, error: result.error };
          const failure = { attempts, error: result.error, failingSince, attempt: this.o.logAttempts ? attempt : undefined };
          if (decision.dead) {
            const reason: SuspendReason = suspend ?? "attempts_exhausted";
            const error = suspensionError(reason, result.error, now - failingSince);
            if (!(await store.failed(id, lease.token, { ...failure, error, nextAttemptAt: 0, deadAt: now }))) return "idle";
            this.o.observer?.suspended(reason);
            logger.warn(
              { ...log, reason, status: result.status, failingSince, event: "subscription_suspended" },
              "callback dead-lettered: delivery suspended until replay",
            );
            return "dead";
          }
          const at = now + decision.delayMs;
          if (!(await store.failed(id, lease.token, { ...failure, nextAttemptAt: at, deadAt: null }))) return "idle";
          if (attempts === 1) logger.warn({ ...log, retryInMs: decision.delayMs }, "callback failed; retrying with backoff");
          else logger.debug({ ...log, retryInMs: decision.delayMs }, "callback retry failed");
          return { parkUntil: at };
        }
        if (!(await record())) return "idle";
      } catch (err) {
        // The slice is stopping (lost lock, Postgres or Redis failure): record what was delivered
        // if the lease still allows it, so fewer events are sent twice. Failing here changes
        // nothing: those events are simply sent again.
        await record().catch((e: Error) => logger.warn({ subscriptionId: id, err: e.message }, "recording deliveries failed"));
        throw err;
      }
    }
  }

  /** Moves the job to BullMQ's delayed set until `at`; the slot is free meanwhile. */
  private async park(job: Job<DeliveryJobData, Outcome>, token: string | undefined, at: number): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }
}

/** This worker may no longer deliver for the subscription; the job fails and its new owner goes on. */
function leaseLost(id: string, why: string): ServiceError {
  return new ServiceError("LEASE_LOST", `stopped delivering to ${id}: ${why}`);
}
