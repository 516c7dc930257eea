import { errorMessage, type Logger } from "@evb/domain";
import type { NotifierConfig } from "../config.ts";
import { readLimit } from "./backlog-reader.ts";
import type { CallbackPoster, CallbackSigner } from "./callback-flight.ts";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import type { DeliveryLimits } from "./delivery-step.ts";
import { CallbackPacer, type SettingsSource } from "./own-settings.ts";
import type { ResendLedger } from "./resend-run.ts";
import { WindowSizes } from "./delivery-window.ts";
import type { SuspendReason } from "./retry-policy.ts";
import { SliceLease } from "./slice-lease.ts";
import { type RunContext, SliceRun } from "./slice-run.ts";
import type { StatsCopies } from "./stats-mirror.ts";

/** What the slices report as they go; the notifier turns it into metrics. */
export interface DeliveryObserver {
  /** One callback attempt to `subscriptionId` ended (`ms`: how long it took). */
  attempt(subscriptionId: string, result: { delivered: boolean; status: number | null }, ms: number): void;
  /** An event was delivered (2xx), `sealedAt` being its block's seal time (epoch ms). */
  delivered(sealedAt: number): void;
  /** A subscription was suspended until replay. */
  suspended(reason: SuspendReason): void;
}

/** Keeps each subscription's delivery-attempt log within its bounds (`AttemptLogPruner`). */
interface AttemptLogKeeper {
  /** A subscription got new attempts in the log. */
  touch(subscriptionId: string): void;
}

/** Whether other subscriptions wait for a delivery slot (`DeliveryQueue`: BullMQ's waiting jobs). */
interface SlotDemand {
  anyWaiting(): Promise<boolean>;
}

/** The ports a slice works through: main.ts passes the real adapters, the unit tests fakes. */
export interface SliceDeps {
  /** The delivery port of Postgres (`DeliveryStore` in production). */
  ledger: DeliveryLedger;
  transport: CallbackPoster;
  signer: CallbackSigner;
  /**
   * Each subscription's own settings (`SubscriptionSettingsStore`), read at every batch so that
   * every notifier enforces what is stored; absent: the deployment's for all.
   */
  settings?: SettingsSource;
  /** Waits `ms` (a rate limit's spacing); setTimeout when absent. */
  sleep?: (ms: number) => Promise<void>;
  /** Resends asked for by admin/resendEvent (`ResendStore`); absent: none are sent. */
  resends?: ResendLedger;
  /** Where the counters of a record are copied (`StatsMirror`: Redis). */
  stats: StatsCopies;
  /**
   * Asked when a slice has delivered DELIVERY_SLICE_EVENTS: it goes on when no other
   * subscription waits for its slot. Absent: it always yields.
   */
  fairness?: SlotDemand;
  /** Told about every attempt, delivery and suspension (metrics). */
  observer?: DeliveryObserver;
  /** Told of every attempt's subscription, after the observer. Absent: nothing is told. */
  attemptLog?: AttemptLogKeeper;
  /**
   * Says why nothing may be delivered now (the ledger is not one this notifier served or an
   * indexer matched: `LedgerGuard`), or null. Absent: never refused.
   */
  ledgerGuard?: { refusal(): string | null };
  logger: Logger;
  now?: () => number;
  random?: () => number;
}

/** The notifier's settings a slice works under. */
export interface SliceSettings {
  /** What delivery-step.ts decides by (retries, suspension, record batch, slice size, window); the record clock is the slice's. */
  limits: Omit<DeliveryLimits, "recordMs">;
  /** Whether each attempt goes to the delivery-attempt log (written with the delivery records). */
  logAttempts: boolean;
  /**
   * Lease of a slice, ms (DELIVERY_LOCK_MS, also the BullMQ lock of its job): a killed
   * notifier's subscriptions are taken over after about this long.
   */
  lockMs: number;
  /** The longest one attempt may take (DELIVERY_TIMEOUT_MS): a POST starts only with this much lease left. */
  attemptMs: number;
  /**
   * Time per slice, ms (DELIVERY_SLICE_MS), after which it yields its slot once the current
   * delivery is recorded: a receiver that answers slowly but successfully holds a slot for about
   * this long, not for DELIVERY_SLICE_EVENTS × the attempt timeout.
   */
  sliceMs: number;
}

/** The slices' settings, from the notifier's configuration (config.ts says what each means). */
export function sliceSettings(config: NotifierConfig): SliceSettings {
  return {
    limits: {
      retry: {
        baseMs: config.RETRY_BASE_MS,
        maxMs: config.RETRY_MAX_MS,
        maxAttempts: config.RETRY_MAX_ATTEMPTS,
        retryAfterMaxMs: config.RETRY_AFTER_MAX_MS,
      },
      disableAfterMs: config.DELIVERY_DISABLE_AFTER_MS,
      recordEvents: config.DELIVERY_RECORD_EVENTS,
      sliceEvents: config.DELIVERY_SLICE_EVENTS,
      window: config.DELIVERY_WINDOW,
    },
    logAttempts: config.DELIVERY_ATTEMPTS_KEEP > 0,
    lockMs: config.DELIVERY_LOCK_MS,
    attemptMs: config.DELIVERY_TIMEOUT_MS,
    sliceMs: config.DELIVERY_SLICE_MS,
  };
}

/** How a slice ended: nothing to do, backlog drained, slot yielded, suspended, or parked until a time. */
export type SliceEnd = "idle" | "drained" | "yield" | "dead" | { parkUntil: number };

/**
 * Delivered events wait at most this long (ms, checked after each delivery) to be recorded, so
 * a slowly answering receiver's progress is not held back for a whole batch.
 */
const RECORD_MS = 200;

/** How long a job waits while the ledger is refused before it looks again (ms). */
const LEDGER_REFUSED_PARK_MS = 2_000;

/** How soon a job finding the subscription leased elsewhere looks again, at most (ms). */
const LEASE_POLL_MS = 1_000;

/**
 * Runs delivery slices: one subscription's backlog, under the slice's Postgres lease, in order.
 * This class takes and releases the lease; the slice itself is a `SliceRun` (slice-run.ts),
 * which applies the decisions of delivery-step.ts through an in-flight window
 * (delivery-window.ts), a backlog reader (backlog-reader.ts) and a recorder
 * (delivery-recorder.ts).
 */
export class DeliverySlice {
  private readonly c: RunContext;
  /** Subscriptions matched new events while their slice ran in this process: it reads again instead of ending. */
  private readonly more = new Set<string>();
  private readonly running = new Set<string>();

  constructor(deps: SliceDeps, settings: SliceSettings) {
    this.c = {
      deps,
      settings,
      limits: { ...settings.limits, recordMs: RECORD_MS },
      readLimit: readLimit(settings.limits.recordEvents),
      now: deps.now ?? Date.now,
      random: deps.random ?? Math.random,
      windows: new WindowSizes(),
      matchedMore: (id) => this.more.delete(id),
      pacer: new CallbackPacer(),
      sleep: deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
    };
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
    const { deps, settings, now } = this.c;
    if ((deps.ledgerGuard?.refusal() ?? null) !== null) return { parkUntil: now() + LEDGER_REFUSED_PARK_MS };
    // A Postgres lease fences this slice; only a live subscription gets one. Held by another
    // notifier: that one still runs a slice of this subscription (it lost its BullMQ lock but not
    // its work); look again soon.
    const leasedAt = now();
    const lease = await deps.ledger.lease(id, settings.lockMs, this.c.readLimit);
    if (!lease.ok) {
      if (lease.retryInMs === null) return "idle";
      deps.logger.debug({ subscriptionId: id, retryInMs: lease.retryInMs }, "subscription leased by another notifier; waiting");
      return { parkUntil: now() + Math.min(Math.max(lease.retryInMs, 50), LEASE_POLL_MS) };
    }
    this.running.add(id);
    this.more.delete(id);
    const held = new SliceLease(
      deps.ledger,
      { id, token: lease.token, at: leasedAt },
      { lockMs: settings.lockMs, attemptMs: settings.attemptMs, now },
    );
    try {
      return await new SliceRun(this.c, held, signal).deliver(lease);
    } finally {
      this.running.delete(id);
      this.more.delete(id);
      if (!held.released)
        await deps.ledger
          .release(id, held.token)
          .catch((err: Error) => deps.logger.warn({ subscriptionId: id, err: errorMessage(err) }, "lease release failed"));
    }
  }
}
