import type { DeliveryAttempt, SubscriptionRow } from "@evb/storage";
import { BacklogReader, type Leased } from "./backlog-reader.ts";
import { DeliveryRecorder } from "./delivery-recorder.ts";
import { writeFailure } from "./failed-head.ts";
import type { SliceDeps, SliceEnd, SliceSettings } from "./delivery-slice.ts";
import { type DeliveryLimits, deliveryStep, recorded, type SliceState, type Step, sliceMove, sliceStart } from "./delivery-step.ts";
import { type Answer, DeliveryWindow, type WindowSizes } from "./delivery-window.ts";
import type { CallbackPacer } from "./own-settings.ts";
import { type OwnSettings, ownSettings } from "./own-settings.ts";
import { sendResends } from "./resend-run.ts";
import { leaseLost, type SliceLease } from "./slice-lease.ts";
import { errorMessage } from "@evb/domain";

/** What every run of one `DeliverySlice` shares. */
export interface RunContext {
  deps: SliceDeps;
  settings: SliceSettings;
  /** The settings' limits with the slice's record clock. */
  limits: DeliveryLimits;
  /** Backlog events read at once. */
  readLimit: number;
  now: () => number;
  random: () => number;
  windows: WindowSizes;
  /** Whether this process matched new events for `id` while its slice ran (and forgets it). */
  matchedMore: (id: string) => boolean;
  /** When rate-limited subscriptions last started a callback here. */
  pacer: CallbackPacer;
  sleep: (ms: number) => Promise<void>;
}

/** A rate limit's wait up to this long is slept in the slice; a longer one parks the job (ms). */
const PACE_SLEEP_MAX_MS = 1_000;

/** The batch being delivered: the events read, the callbacks in flight, and whether the slice stopped sending. */
interface Batch {
  reader: BacklogReader;
  window: DeliveryWindow;
  /** The slice yields its slot: it starts nothing more, and still judges (and records) what is in flight. */
  stopping: boolean;
  /** Set when the subscription's rate limit stopped the batch: the job waits until then. */
  parkUntil?: number;
}

/**
 * One slice of a subscription under its lease: its backlog batch by batch, in order. Each answer
 * goes through `deliveryStep` (delivery-step.ts), which says what to do next, and `apply` does
 * it. With a window above 1, the next events are sent while the head's answer is awaited, and
 * answers are judged in event order: a failure drops the window to 1 and nothing after the
 * failed event is recorded.
 */
export class SliceRun {
  private readonly c: RunContext;
  private readonly lease: SliceLease;
  private readonly signal: AbortSignal | undefined;
  private readonly recorder: DeliveryRecorder;
  /** When the slice must yield its slot. */
  private readonly endsAt: number;
  /** Events delivered in this slice, carried from batch to batch. */
  private sent = 0;
  /** The step's state in the current batch. */
  private state!: SliceState;
  /** The subscription's own settings, read again for each batch. */
  private own!: OwnSettings;
  /** Before each POST: the lease has an attempt's time left and BullMQ's lock is held. */
  private readonly keep = (): Promise<void> => this.lease.keep(this.signal);

  /** `signal` fires when BullMQ says the job's lock is lost. */
  constructor(c: RunContext, lease: SliceLease, signal: AbortSignal | undefined) {
    this.c = c;
    this.lease = lease;
    this.signal = signal;
    this.endsAt = c.now() + c.settings.sliceMs;
    this.recorder = new DeliveryRecorder(lease, {
      ledger: c.deps.ledger,
      stats: c.deps.stats,
      now: c.now,
      lockMs: c.settings.lockMs,
      onRecorded: (at) => {
        this.state = recorded(this.state, at);
      },
    });
  }

  /** Delivers until the backlog is drained or a step ends the slice; the last counter copy is waited for. */
  async deliver(leased: Leased): Promise<SliceEnd> {
    try {
      return await this.batches(leased);
    } finally {
      await this.recorder.close();
    }
  }

  private async batches(leased: Leased): Promise<SliceEnd> {
    // The row and first batch as the lease statement returned them, then read again for each
    // later batch. Never a row read before the lease: a slice of another notifier that held the
    // lease until just now may have written the head's retry state.
    let first: Leased | null = leased;
    if (!(await this.readSettings())) return "idle";
    // Resends (admin/resendEvent) go first: they are out of order by design, and a backlog parked
    // on a failing head must not hold them back.
    const resends = this.c.deps.resends;
    if (resends && sliceMove(leased.row, this.c.now()) !== "stop") {
      if (
        !(await sendResends({ ...this.c, settings: { ...this.c.settings, limits: this.own.limits } }, resends, this.lease, leased.row, {
          signal: this.signal,
          keys: this.own.keys,
          headers: this.own.headers,
          bodyMode: this.own.bodyMode,
        }))
      )
        return "idle";
    }
    for (;;) {
      const sub = first?.row ?? (await this.c.deps.ledger.subscription(this.lease.id));
      const move = sliceMove(sub, this.c.now());
      if (move === "stop" || !sub) return "idle";
      if (move === "park") return { parkUntil: sub.nextAttemptAt };
      // A pause takes effect at the next batch; the backlog waits for the resume's wake-up.
      if (!first && !(await this.readSettings())) return "idle";
      const end = move === "catch-up" ? await this.catchUp() : await this.batch(sub, first);
      if (end) return end;
      first = null;
    }
  }

  /** Reads the subscription's own settings; false when it is paused (nothing is sent). */
  private async readSettings(): Promise<boolean> {
    const { deps, limits, now } = this.c;
    const own = deps.settings ? await deps.settings.get(this.lease.id) : null;
    this.own = own ? ownSettings(own, limits, now()) : { paused: false, limits, keys: null, spacingMs: 0 };
    return !this.own.paused;
  }

  /** Refills one page of a resumed subscription's missed events. Null: go on. */
  private async catchUp(): Promise<SliceEnd | null> {
    const { deps, settings, now } = this.c;
    await this.keep();
    const at = now();
    const page = await deps.ledger.catchUp(this.lease.id, this.lease.token, settings.lockMs);
    if (!page) return "idle";
    this.lease.extended(at, settings.lockMs);
    await deps.stats.copy([page.stats]);
    return !page.done && now() >= this.endsAt ? "yield" : null;
  }

  /** Delivers one batch of the backlog (`first`: the lease's). Null: read the next batch. */
  private async batch(sub: SubscriptionRow, first: Leased | null): Promise<SliceEnd | null> {
    const { deps, now } = this.c;
    const { limits, keys, headers, bodyMode, filter } = this.own;
    const id = this.lease.id;
    const reader = await BacklogReader.open(deps.ledger, sub, first, { id, limit: this.c.readLimit, ahead: limits.window > 1, now });
    if (!reader) return "drained";
    const start = sliceStart(sub, now(), limits, this.c.settings.sliceMs, this.c.windows.of(id));
    this.state = { ...start, endsAt: this.endsAt, sent: this.sent };
    const window = new DeliveryWindow(deps, now, {
      id,
      url: sub.url,
      variant: sub.bodyVariant,
      signal: this.signal,
      keys,
      headers,
      bodyMode,
      filter,
    });
    const b: Batch = { reader, window, stopping: false };
    try {
      return await this.work(b);
    } catch (err) {
      // The slice is stopping (lost lock, Postgres or Redis failure): record what was delivered
      // if the lease still allows it, so fewer events are sent twice. Failing here changes
      // nothing: those events are simply sent again.
      await window.settle();
      await reader.quiet();
      await this.recorder
        .record()
        .catch((e: Error) => deps.logger.warn({ subscriptionId: id, err: errorMessage(e) }, "recording deliveries failed"));
      throw err;
    }
  }

  /** Sends the batch's events and judges their answers in order, until all are judged or a step ends the slice. */
  private async work(b: Batch): Promise<SliceEnd | null> {
    for (;;) {
      await this.fill(b);
      const answer = await b.window.answer();
      if (!answer) return this.finish(b);
      if (this.signal?.aborted) throw leaseLost(this.lease.id, "its BullMQ lock was lost");
      // An event the content filter passed over was no attempt: nothing for the metrics or the attempt log.
      const skipped = answer.result.delivered && answer.result.skipped === true;
      const attempt = this.attempted(answer, skipped);
      const end = await this.apply(this.judge(answer, skipped ? null : attempt), b, attempt);
      if (end) return end;
    }
  }

  /** Opens the window as far as the state allows, each event sent after the previous one was written. */
  private async fill(b: Batch): Promise<void> {
    const { pacer, now } = this.c;
    const { spacingMs } = this.own;
    while (!b.stopping && b.window.inFlight < this.state.window) {
      if (!(await this.paced(b))) return;
      // Nothing read is left to send: wait for the read ahead only when nothing is in flight.
      const item = b.reader.take(this.state.window) ?? (b.window.inFlight === 0 ? await b.reader.takeAfterRead() : null);
      if (!item) return;
      if (await b.window.send(item, this.keep)) pacer.started(this.lease.id, spacingMs, now());
    }
  }

  /** Keeps the subscription's rate limit (maxRate): a long wait stops the batch and parks the job. False: start nothing now. */
  private async paced(b: Batch): Promise<boolean> {
    const { pacer, now, sleep } = this.c;
    const parkUntil = await pacer.pace(this.lease.id, this.own.spacingMs, { now, sleep, sleepMaxMs: PACE_SLEEP_MAX_MS });
    if (parkUntil === null) return true;
    b.stopping = true;
    b.parkUntil = parkUntil;
    return false;
  }

  /** The answer as the attempt log keeps it; the observer, then the attempt log's keeper, is told of it. */
  private attempted(a: Answer, skipped: boolean): DeliveryAttempt {
    if (!skipped) {
      this.c.deps.observer?.attempt(this.lease.id, a.result, a.ms);
      this.c.deps.attemptLog?.touch(this.lease.id);
    }
    return {
      eventId: a.item.eventId,
      at: a.startedAt,
      durationMs: a.ms,
      status: a.result.status,
      error: a.result.delivered ? null : a.result.error,
      excerpt: a.result.excerpt,
      traceparent: a.result.traceparent,
    };
  }

  /**
   * What the answer means (deliveryStep), taking the step's state; a delivery is kept for the next
   * record. `attempt` null: an event the content filter passed over (recorded, no attempt logged).
   */
  private judge(a: Answer, attempt: DeliveryAttempt | null): Step {
    const { deps, now, random } = this.c;
    const { limits } = this.own;
    const wasRetried = this.state.attempts;
    const step = deliveryStep(this.state, a.result, { startedAt: a.startedAt, now: now() }, limits, random());
    this.state = step.state;
    this.c.windows.keep(this.lease.id, step.state.window);
    if (a.result.delivered) {
      this.recorder.delivered(a.item, this.c.settings.logAttempts ? attempt : null, attempt?.traceparent);
      this.sent = step.state.sent;
      if (attempt) deps.observer?.delivered(a.item.sealedAt);
      if (wasRetried > 0)
        deps.logger.info(
          { subscriptionId: this.lease.id, eventId: a.item.eventId, attempts: wasRetried },
          "callback delivered after retries",
        );
    }
    return step;
  }

  /** Does what the step decided for batch `b` (`attempt`: the answer it judged). Null: go on with the batch. */
  private async apply(step: Step, b: Batch, attempt: DeliveryAttempt): Promise<SliceEnd | null> {
    switch (step.action) {
      case "post":
        return null;
      case "record":
        if (!(await this.recorder.record())) {
          await b.window.settle();
          return "idle";
        }
        b.reader.forgetSent();
        return null;
      case "yield":
        return this.yieldSlot(step.reason, b);
      default:
        // A failed attempt: what was sent after it does not count; record what came before it.
        await b.window.settle();
        if (!(await this.recorder.record())) return "idle";
        return writeFailure(this.c, this.recorder, { id: this.lease.id, step, attempt });
    }
  }

  /** DELIVERY_SLICE_EVENTS delivered, or DELIVERY_SLICE_MS up. Null: go on with the batch. */
  private async yieldSlot(reason: "events" | "time", b: Batch): Promise<SliceEnd | null> {
    const { fairness } = this.c.deps;
    if (!b.stopping && reason === "events" && fairness && !(await fairness.anyWaiting())) {
      // Nobody waits for the slot: a new round of DELIVERY_SLICE_EVENTS.
      this.state = { ...this.state, sent: 0 };
      return null;
    }
    // Start nothing more; answers already on their way are still judged (and recorded).
    b.stopping = true;
    if (b.window.inFlight > 0) return null;
    return (await this.recorder.record()) ? "yield" : "idle";
  }

  /** Every event of the batch was judged. Null: read the next batch. */
  private async finish(b: Batch): Promise<SliceEnd | null> {
    await b.reader.finish();
    if (b.stopping) return (await this.recorder.record()) ? (b.parkUntil === undefined ? "yield" : { parkUntil: b.parkUntil }) : "idle";
    // Everything read is delivered. A short read was all there was: end here (the job's
    // completion looks for rows added meanwhile), unless the dispatcher of this process matched
    // more for it while it ran; the record then also releases the lease (one statement fewer per
    // slice).
    if (b.reader.exhausted && !this.c.matchedMore(this.lease.id)) {
      const releases = this.recorder.unrecorded > 0;
      if (!(await this.recorder.record(0))) return "idle";
      this.lease.released = releases;
      return "drained";
    }
    return (await this.recorder.record()) ? null : "idle";
  }
}
