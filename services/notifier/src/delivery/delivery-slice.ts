import { type Logger, ServiceError } from "@evb/domain";
import type { BacklogItem, DeliveryAttempt, LeaseResult, SubscriptionStats } from "@evb/storage";
import { type CallbackPoster, type CallbackSigner, type Flight, startFlight } from "./callback-flight.ts";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import { Pending } from "./pending.ts";
import { type DeliveryLimits, deliveryStep, recorded, type SliceState, type Step, sliceMove, sliceStart } from "./delivery-step.ts";
import type { SuspendReason } from "./retry-policy.ts";

/** What the worker reports as it goes; the notifier turns it into metrics. */
export interface DeliveryObserver {
  /** One callback attempt to `subscriptionId` ended (`ms`: how long it took). */
  attempt(subscriptionId: string, result: { delivered: boolean; status: number | null }, ms: number): void;
  /** An event was delivered (2xx), `sealedAt` being its block's seal time (epoch ms). */
  delivered(sealedAt: number): void;
  /** A subscription was suspended until replay. */
  suspended(reason: SuspendReason): void;
}

export interface DeliverySliceOptions {
  ledger: DeliveryLedger;
  transport: CallbackPoster;
  signer: CallbackSigner;
  limits: DeliveryLimits;
  /** Whether each attempt goes to the delivery-attempt log (written with the delivery records). */
  logAttempts: boolean;
  /** Lease of a slice, ms (DELIVERY_LOCK_MS). */
  lockMs: number;
  /** The longest one attempt may take (DELIVERY_TIMEOUT_MS): a POST starts only with this much lease left. */
  attemptMs: number;
  /** Time per slice, ms (DELIVERY_SLICE_MS). */
  sliceMs: number;
  onStats: (stats: SubscriptionStats[]) => Promise<void>;
  /**
   * Whether other subscriptions wait for a delivery slot (BullMQ's waiting jobs): a slice that
   * has delivered DELIVERY_SLICE_EVENTS goes on when none do. Absent: always yield.
   */
  othersWaiting?: () => Promise<boolean>;
  observer?: DeliveryObserver;
  logger: Logger;
  now?: () => number;
  random?: () => number;
}

/** How a slice ended: nothing to do, backlog drained, slot yielded, suspended, or parked until a time. */
export type SliceEnd = "idle" | "drained" | "yield" | "dead" | { parkUntil: number };

/** Backlog events read at once (at least; more when DELIVERY_RECORD_EVENTS is larger). */
const READ_EVENTS = 50;

/**
 * Runs delivery slices: one subscription's backlog, under the slice's Postgres lease, in order.
 * Each answer goes through `deliveryStep` (delivery-step.ts), which says what to do next; this
 * class only does it. With a window above 1, the next events are sent while the head's answer
 * is awaited, each only after the previous request was written, and answers are judged in event
 * order: a failure drops the window to 1 and nothing after the failed event is recorded.
 */
export class DeliverySlice {
  private readonly o: DeliverySliceOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  /** Window reached per subscription (only those above 1), so a new slice starts where the last left off. */
  private readonly windows = new Map<string, number>();
  /** Subscriptions matched new events while their slice ran in this process: it reads again instead of ending. */
  private readonly more = new Set<string>();
  private readonly running = new Set<string>();

  constructor(o: DeliverySliceOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.random = o.random ?? Math.random;
  }

  /**
   * New backlog rows for these subscriptions: a slice running here reads once more before it
   * ends. Returns the ids with no slice running here.
   */
  notify(ids: readonly string[]): string[] {
    const idle: string[] = [];
    for (const id of ids) {
      if (this.running.has(id)) this.more.add(id);
      else idle.push(id);
    }
    return idle;
  }

  /**
   * One slice of subscription `id`: takes the lease (or says when to look again), delivers, and
   * releases the lease. `signal` fires when BullMQ says the job's lock is lost.
   */
  async run(id: string, signal?: AbortSignal): Promise<SliceEnd> {
    const { ledger, logger } = this.o;
    // A Postgres lease fences this slice; only a live subscription gets one. Held by another
    // notifier: that one still runs a slice of this subscription (it lost its BullMQ lock but not
    // its work); look again soon.
    const leasedAt = this.now();
    const lease = await ledger.lease(id, this.o.lockMs, this.readLimit());
    if (!lease.ok) {
      if (lease.retryInMs === null) return "idle";
      logger.debug({ subscriptionId: id, retryInMs: lease.retryInMs }, "subscription leased by another notifier; waiting");
      return { parkUntil: this.now() + Math.min(Math.max(lease.retryInMs, 50), LEASE_POLL_MS) };
    }
    this.running.add(id);
    this.more.delete(id);
    const held = { token: lease.token, expires: leasedAt + this.o.lockMs, released: false };
    try {
      return await this.slice(id, held, lease, signal);
    } finally {
      this.running.delete(id);
      this.more.delete(id);
      if (!held.released)
        await ledger
          .release(id, held.token)
          .catch((err: Error) => logger.warn({ subscriptionId: id, err: err.message }, "lease release failed"));
    }
  }

  /**
   * Delivers the backlog batch by batch under the lease. Before each POST the lease must have at
   * least one attempt's time left on this process's clock (renewed otherwise), so a POST never
   * outlives it; every record checks the token. Stops when BullMQ says the job's lock is lost
   * (`signal`) or the lease is gone: another notifier is taking over.
   */
  private async slice(
    id: string,
    lease: { token: number; expires: number; released: boolean },
    leased: Leased,
    signal?: AbortSignal,
  ): Promise<SliceEnd> {
    const copying = new Pending();
    try {
      return await this.deliver(id, lease, leased, copying, signal);
    } finally {
      await copying.wait();
    }
  }

  private async deliver(
    id: string,
    lease: { token: number; expires: number; released: boolean },
    leased: Leased,
    copying: Pending,
    signal?: AbortSignal,
  ): Promise<SliceEnd> {
    const { ledger, logger, limits } = this.o;
    const sliceEnds = this.now() + this.o.sliceMs;
    let sent = 0;
    const keep = async () => {
      if (signal?.aborted) throw leaseLost(id, "its BullMQ lock was lost");
      if (lease.expires - this.now() > this.o.attemptMs) return;
      const at = this.now();
      if (!(await ledger.renew(id, lease.token, this.o.lockMs))) throw leaseLost(id, "its lease was taken over");
      lease.expires = at + this.o.lockMs;
    };
    // The row and first batch as the lease statement returned them, then read again for each
    // later batch. Never a row read before the lease: a slice of another notifier that held the
    // lease until just now may have written the head's retry state.
    let fresh: Leased | null = leased;
    for (;;) {
      const first = fresh;
      fresh = null;
      const sub = first?.row ?? (await ledger.subscription(id));
      const move = sliceMove(sub, this.now());
      if (move === "stop" || !sub) return "idle";
      if (move === "catch-up") {
        await keep();
        const at = this.now();
        const page = await ledger.catchUp(id, lease.token, this.o.lockMs);
        if (!page) return "idle";
        lease.expires = at + this.o.lockMs;
        await this.o.onStats([page.stats]);
        if (!page.done && this.now() >= sliceEnds) return "yield";
        continue;
      }
      if (move === "park") return { parkUntil: sub.nextAttemptAt };
      const limit = this.readLimit();
      // The events read and not yet sent are queue[next…]. While they are sent, the next ones are
      // read ahead (`backlogAfter` the last one read), so a window never empties at a batch's end.
      const queue = first ? [...first.backlog] : await ledger.backlog(id, limit);
      if (queue.length === 0) return "drained";
      /** The last read came back full (or the lease's first batch was cut short): the backlog may hold more. */
      let more = first ? first.more : queue.length === limit;
      /** The row changed under the slice (URL, unsubscribed, refill, dead): read no further ahead. */
      let halted = false;
      let reading: Promise<void> | null = null;
      let readError: unknown = null;
      const readAhead = (): Promise<void> => {
        reading ??= (async () => {
          const last = queue.at(-1) as BacklogItem;
          try {
            // One connection at a time (the pool is shared by every slot), and no backlog read
            // when the row says stop.
            const row = await ledger.subscription(id);
            if (sliceMove(row, this.now()) !== "read" || row?.url !== sub.url || row.bodyVariant !== sub.bodyVariant) {
              halted = true;
              return;
            }
            const rows = await ledger.backlogAfter(id, last.height, last.idx, limit);
            queue.push(...rows);
            more = rows.length === limit;
          } catch (err) {
            readError = err;
            halted = true;
          } finally {
            reading = null;
          }
        })();
        return reading;
      };
      let state: SliceState = {
        ...sliceStart(sub, this.now(), limits, this.o.sliceMs, this.windows.get(id) ?? 1),
        endsAt: sliceEnds,
        sent,
      };
      const done: BacklogItem[] = [];
      const logged: DeliveryAttempt[] = [];
      // false: the subscription was unsubscribed or the lease taken over; not ours to go on.
      const record = async (leaseMs = this.o.lockMs): Promise<boolean> => {
        if (done.length === 0) return true;
        const at = this.now();
        const stats = await ledger.deliveredBatch({
          id,
          token: lease.token,
          events: done.map((e) => ({ height: e.height, idx: e.idx })),
          attempts: logged.length > 0 ? [...logged] : [],
          now: at,
          leaseMs,
        });
        done.length = 0;
        logged.length = 0;
        state = recorded(state, this.now());
        if (!stats) return false;
        lease.expires = at + leaseMs;
        // The counter copy (Redis) goes on while the next callbacks are sent; its failure
        // surfaces at the next record or when the slice ends, as if it had been awaited here.
        await copying.wait();
        copying.start(this.o.onStats([stats]));
        return true;
      };
      const flights: Flight[] = [];
      // Callbacks still in flight when the slice stops judging answers: their answers no longer
      // count (a later event's 2xx after a failed one is not recorded), but the slice waits for
      // them, so none outlives the lease or overlaps the next slice's sends.
      const settle = () => Promise.allSettled(flights.splice(0).map((f) => f.result));
      let next = 0;
      let stopping = false;
      // Reading ahead only pays while a window is open; at window 1 a read waits for the batch's end.
      const canRead = () => more && !halted && limits.window > 1;
      try {
        for (;;) {
          while (!stopping && flights.length < state.window) {
            if (canRead() && queue.length - next <= state.window) void readAhead();
            if (next >= queue.length) {
              // Nothing read is left to send: wait for the read ahead only when nothing is in flight.
              if (!canRead() || flights.length > 0) break;
              await readAhead();
              if (readError) throw readError;
              if (next >= queue.length) break;
            }
            const last = flights.at(-1);
            if (last) await last.written;
            await keep();
            flights.push(
              startFlight(this.o, this.now, { id, item: queue[next++] as BacklogItem, url: sub.url, variant: sub.bodyVariant, signal }),
            );
          }
          if (flights.length === 0) break;
          const flight = flights.shift() as Flight;
          const { result, endedAt } = await flight.result;
          if (signal?.aborted) throw leaseLost(id, "its BullMQ lock was lost");
          const ms = endedAt - flight.startedAt;
          this.o.observer?.attempt(id, result, ms);
          const attempt: DeliveryAttempt = {
            eventId: flight.item.eventId,
            at: flight.startedAt,
            durationMs: ms,
            status: result.status,
            error: result.delivered ? null : result.error,
            excerpt: result.excerpt,
          };
          const wasRetried = state.attempts;
          const step: Step = deliveryStep(state, result, { startedAt: flight.startedAt, now: this.now() }, limits, this.random());
          state = step.state;
          this.keepWindow(id, state.window);
          if (result.delivered) {
            done.push(flight.item);
            sent = state.sent;
            if (this.o.logAttempts) logged.push(attempt);
            this.o.observer?.delivered(flight.item.sealedAt);
            if (wasRetried > 0)
              logger.info({ subscriptionId: id, eventId: flight.item.eventId, attempts: wasRetried }, "callback delivered after retries");
          }
          if (step.action === "post") continue;
          if (step.action === "record") {
            if (!(await record())) {
              await settle();
              return "idle";
            }
            // What was sent is no longer needed in memory.
            queue.splice(0, next);
            next = 0;
            continue;
          }
          if (step.action === "yield") {
            if (!stopping && step.reason === "events" && this.o.othersWaiting && !(await this.o.othersWaiting())) {
              // Nobody waits for the slot: a new round of DELIVERY_SLICE_EVENTS.
              state = { ...state, sent: 0 };
              continue;
            }
            // Start nothing more; answers already on their way are still judged (and recorded).
            stopping = true;
            if (flights.length > 0) continue;
            return (await record()) ? "yield" : "idle";
          }
          // A failed attempt: what was sent after it does not count; record what came before it.
          await settle();
          if (!(await record())) return "idle";
          const failure = {
            attempts: step.failure.attempts,
            failingSince: step.failure.failingSince,
            attempt: this.o.logAttempts ? attempt : undefined,
          };
          const log = { subscriptionId: id, eventId: flight.item.eventId, attempts: step.failure.attempts, error: attempt.error };
          if (step.action === "dead-letter") {
            const at = this.now();
            if (!(await ledger.failed(id, lease.token, { ...failure, error: step.failure.error, nextAttemptAt: 0, deadAt: at })))
              return "idle";
            this.o.observer?.suspended(step.reason);
            logger.warn(
              {
                ...log,
                reason: step.reason,
                status: result.status,
                failingSince: step.failure.failingSince,
                event: "subscription_suspended",
              },
              "callback dead-lettered: delivery suspended until replay",
            );
            return "dead";
          }
          if (
            !(await ledger.failed(id, lease.token, {
              ...failure,
              error: step.failure.error,
              nextAttemptAt: step.nextAttemptAt,
              deadAt: null,
            }))
          )
            return "idle";
          const retryInMs = step.nextAttemptAt - this.now();
          if (step.firstFailure) logger.warn({ ...log, retryInMs }, "callback failed; retrying with backoff");
          else logger.debug({ ...log, retryInMs }, "callback retry failed");
          return { parkUntil: step.nextAttemptAt };
        }
        await reading;
        if (readError) throw readError;
        if (stopping) return (await record()) ? "yield" : "idle";
        // Everything read is delivered. A short read was all there was: end here (the job's
        // completion looks for rows added meanwhile), unless the dispatcher of this process
        // matched more for it while it ran; the record then also releases the lease (one
        // statement fewer per slice).
        if (!more && !halted && !this.more.delete(id)) {
          const releases = done.length > 0;
          if (!(await record(0))) return "idle";
          lease.released = releases;
          return "drained";
        }
        if (!(await record())) return "idle";
      } catch (err) {
        // The slice is stopping (lost lock, Postgres or Redis failure): record what was delivered
        // if the lease still allows it, so fewer events are sent twice. Failing here changes
        // nothing: those events are simply sent again.
        await settle();
        await reading;
        await record().catch((e: Error) => logger.warn({ subscriptionId: id, err: e.message }, "recording deliveries failed"));
        throw err;
      }
    }
  }

  /** Backlog events read at once. */
  private readLimit(): number {
    return Math.max(this.o.limits.recordEvents, READ_EVENTS);
  }

  private keepWindow(id: string, window: number): void {
    if (window > 1) this.windows.set(id, window);
    else this.windows.delete(id);
  }
}

/** What the lease statement returned: the row as it left it and the first batch of the backlog. */
type Leased = Pick<Extract<LeaseResult, { ok: true }>, "row" | "backlog" | "more">;

/** How soon a job finding the subscription leased elsewhere looks again, at most (ms). */
const LEASE_POLL_MS = 1_000;

/** This worker may no longer deliver for the subscription; the job fails and its new owner goes on. */
function leaseLost(id: string, why: string): ServiceError {
  return new ServiceError("LEASE_LOST", `stopped delivering to ${id}: ${why}`);
}
