import { type DispatchLimits, type DispatchPlan, type LedgerEvent, type LedgerPosition, planDispatch } from "@evb/domain";
import type { DispatchRun, SubscriptionChange, SubscriptionStats } from "@evb/storage";

/**
 * The dispatcher's in-memory index of one group's subscriptions (`SubscriptionIndex`). `apply`
 * gets every change with a revision above `revision` (in revision order) before each plan;
 * `match` returns the ids of subscriptions that want an event of `topic` sealed at `height`.
 */
export interface DispatchIndex {
  readonly revision: number;
  /** The identity of the ledger the index was built from (null before the first run). */
  readonly ledger: string | null;
  /**
   * Empties the index for another ledger (the schema dropped and made again, a restored or
   * rebuilt database): its revisions start again, so nothing of the old index holds.
   */
  reset(ledger: string): void;
  apply(changes: readonly SubscriptionChange[]): void;
  match(topic: string, height: number): readonly string[];
}

/** One committed dispatch run. */
export interface DispatchResult {
  from: LedgerPosition;
  to: LedgerPosition;
  events: number;
  /** Backlog rows matched (inserted, unless a row was there already). */
  rows: number;
  /** Subscriptions that got new backlog entries, with their counters after the run. */
  touched: SubscriptionStats[];
  /** The traceparents of the dispatched events that have one (sealed with tracing on). */
  traceparents?: string[];
}

/** The SQL of dispatch (`DispatchStore`): a cheap "is the group behind?" and a run under the group's lock. */
export interface DispatchLedger {
  behind(groupId: string): Promise<boolean>;
  open(groupId: string): Promise<Pick<DispatchRun, "read" | "write" | "commit" | "abort">>;
}

/**
 * One bounded, atomic dispatch run at a time against the ledger (the dispatcher's
 * `DispatchSource`): in one transaction under the group's lock, the store reads the cursor, head,
 * events and subscription changes; the index takes the changes and `planDispatch`
 * (packages/domain) decides which events the run takes, which backlog rows they make and where
 * the cursor moves; the store writes that and commits. A failure rolls everything back.
 */
export class LedgerDispatch {
  private readonly store: DispatchLedger;

  constructor(store: DispatchLedger) {
    this.store = store;
  }

  behind(groupId: string): Promise<boolean> {
    return this.store.behind(groupId);
  }

  /** One run with `index`; null (nothing written) when the cursor is at the sealed head. */
  async dispatch(groupId: string, index: DispatchIndex, limits: DispatchLimits): Promise<DispatchResult | null> {
    const run = await this.store.open(groupId);
    try {
      const read = await run.read({ revision: index.revision, ledger: index.ledger }, limits.maxEvents);
      if (read.ledger !== index.ledger) index.reset(read.ledger);
      if (read.changes.length > 0) index.apply(read.changes);
      const plan = planDispatch(read.cursor, read.head, read.events, (topic, height) => index.match(topic, height), limits);
      if (!plan) {
        await run.commit();
        return null;
      }
      const touched = await run.write(plan, limits.maxRows);
      await run.commit();
      return {
        from: read.cursor,
        to: plan.to,
        events: plan.events,
        rows: plan.rows.subs.length,
        touched,
        traceparents: traced(read.events, plan),
      };
    } catch (err) {
      await run.abort(err);
      throw err;
    }
  }
}

/** The traceparents of the events the plan took that have one. */
function traced(events: readonly LedgerEvent[], plan: DispatchPlan): string[] {
  const traceparents: string[] = [];
  for (let i = 0; i < plan.events; i++) {
    const tp = events[i]?.traceparent;
    if (tp) traceparents.push(tp);
  }
  return traceparents;
}
