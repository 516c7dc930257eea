import type { DispatchLimits, Logger } from "@evb/domain";
import type { SubscriptionStats } from "@evb/storage";
import { tracedDispatch } from "./dispatch-trace.ts";
import type { DispatchIndex, DispatchResult } from "./ledger-dispatch.ts";
import { SubscriptionIndex } from "./subscription-index.ts";

/**
 * The ledger as the dispatcher needs it (`LedgerDispatch` in production): a cheap "is the group
 * behind?" and one bounded, atomic dispatch run (null when there was nothing to dispatch).
 */
export interface DispatchSource {
  behind(groupId: string): Promise<boolean>;
  dispatch(groupId: string, index: DispatchIndex, limits: DispatchLimits): Promise<DispatchResult | null>;
}

/**
 * The hints port (`DeliveryHandoff` in production): told after each committed run of the
 * subscriptions that got new backlog entries (their counters are copied, their delivery jobs made sure of).
 */
interface MatchedHandoff {
  matched(touched: SubscriptionStats[]): Promise<void>;
}

/**
 * Why nothing may be dispatched now (the ledger in Postgres is not one this notifier served or an
 * indexer matched: `LedgerGuard`), or null.
 */
interface LedgerRefusal {
  refusal(): string | null;
}

export interface DispatcherOptions {
  store: DispatchSource;
  groups: readonly string[];
  /** Bounds of one dispatch transaction (events, backlog rows). */
  limits: DispatchLimits;
  /** Fallback poll of the ledger, ms; the indexer's block nudges only cut latency. */
  pollMs: number;
  handoff: MatchedHandoff;
  /** Absent: never paused. */
  ledgerGuard?: LedgerRefusal;
  logger: Logger;
  now?: () => number;
}

/** A group whose dispatch keeps failing: what /health shows. */
export interface DispatchFailure {
  groupId: string;
  failures: number;
  since: number;
  lastError: string;
  retryAt: number;
}

/** Consecutive failures of one group after which the notifier reports itself unhealthy. */
export const UNHEALTHY_AFTER_FAILURES = 3;
const MAX_BACKOFF_MS = 60_000;

/**
 * Follows each group's sealed events from the durable dispatch cursor and appends every event to
 * the backlog of each matching subscription. The cursor moves in the same transaction as the
 * backlog rows, so after a crash the next run (on start, or by the poll) continues exactly where
 * the last commit left off. Several notifiers may run this at once: the group's row lock makes
 * them take turns. A failing run is logged every time and retried with exponential backoff; a
 * group that keeps failing shows in `failures()` (and so on /health).
 */
export class Dispatcher {
  private readonly o: DispatcherOptions;
  private readonly now: () => number;
  private readonly indexes = new Map<string, SubscriptionIndex>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly failing = new Map<string, DispatchFailure>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(o: DispatcherOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    for (const g of o.groups) this.indexes.set(g, new SubscriptionIndex());
  }

  start(): void {
    for (const g of this.o.groups) this.nudge(g);
    this.timer = setInterval(() => void this.poll(), this.o.pollMs);
  }

  /** A new block (or anything that may need a run): run now, or once more after the current run. */
  nudge(groupId: string): void {
    if (this.stopped || !this.indexes.has(groupId)) return;
    // A failing group waits for its backoff; the poll retries it when due.
    if ((this.failing.get(groupId)?.retryAt ?? 0) > this.now()) return;
    if (this.running.has(groupId)) {
      this.again.add(groupId);
      return;
    }
    const run = this.drain(groupId).finally(() => {
      this.running.delete(groupId);
      if (this.again.delete(groupId)) this.nudge(groupId);
    });
    this.running.set(groupId, run);
  }

  /**
   * What the failing runs needed answers again (readiness saw Postgres or Redis come back): retry
   * every failing group now rather than at the end of its backoff, which may be a minute away.
   */
  retryNow(): void {
    const now = this.now();
    for (const [groupId, failure] of this.failing) {
      if (failure.retryAt > now) this.failing.set(groupId, { ...failure, retryAt: now });
      this.nudge(groupId);
    }
  }

  /** Groups whose dispatch is failing right now, with how often and why. */
  failures(): DispatchFailure[] {
    return [...this.failing.values()];
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.running.values()]);
  }

  private async poll(): Promise<void> {
    for (const g of this.o.groups) {
      if (this.running.has(g)) continue;
      const failure = this.failing.get(g);
      if (failure) {
        if (failure.retryAt <= this.now()) this.nudge(g);
        continue;
      }
      try {
        if (await this.o.store.behind(g)) this.nudge(g);
      } catch (err) {
        this.report(g, err);
      }
    }
  }

  private async drain(groupId: string): Promise<void> {
    // Another deployment's ledger, or one being rebuilt: matching its events would call its
    // subscribers, or ours with half a history. The poll comes back once it is served again.
    if ((this.o.ledgerGuard?.refusal() ?? null) !== null) return;
    const index = this.indexes.get(groupId) as SubscriptionIndex;
    try {
      while (!this.stopped) {
        const r = await tracedDispatch(groupId, () => this.o.store.dispatch(groupId, index, this.o.limits));
        if (!r) break;
        if (r.touched.length > 0) await this.o.handoff.matched(r.touched);
        this.o.logger.debug({ groupId, from: r.from, to: r.to, events: r.events, rows: r.rows, matched: r.touched.length }, "dispatched");
      }
      const was = this.failing.get(groupId);
      if (was) this.o.logger.info({ groupId, failures: was.failures }, "dispatch recovered");
      this.failing.delete(groupId);
    } catch (err) {
      // The transaction rolled back: the cursor did not move, and the run is retried.
      this.report(groupId, err);
    }
  }

  /** Logs every failure (the same one repeating must stay visible) and spaces the retries out. */
  private report(groupId: string, err: unknown): void {
    const now = this.now();
    const prev = this.failing.get(groupId);
    const failures = (prev?.failures ?? 0) + 1;
    const backoffMs = Math.min(MAX_BACKOFF_MS, this.o.pollMs * 2 ** (failures - 1));
    const lastError = err instanceof Error ? err.message : String(err);
    this.failing.set(groupId, { groupId, failures, since: prev?.since ?? now, lastError, retryAt: now + backoffMs });
    this.o.logger.warn(
      { groupId, failures, err: lastError, retryInMs: backoffMs },
      failures >= UNHEALTHY_AFTER_FAILURES ? "dispatch keeps failing; /health reports it" : "dispatch failed; retrying with backoff",
    );
  }
}
