import type { SubscriptionStats } from "@evb/storage";
import type { StatsCopies } from "../delivery/stats-mirror.ts";

/** The slices running in this process (`DeliveryWorker`): told of new backlog rows. */
interface RunningSlices {
  /** A slice running here for one of `ids` reads again instead of ending; returns the others. */
  notify(ids: readonly string[]): string[];
}

/** The delivery jobs (`DeliveryQueue`). */
interface DeliveryJobs {
  ensure(entries: readonly { id: string; nextAttemptAt: number }[]): Promise<void>;
}

/**
 * What happens to the subscriptions a dispatch run matched (the dispatcher's `MatchedHandoff`):
 * their counters are copied and each gets a delivery job, unless a slice running here reads them anyway.
 */
export class DeliveryHandoff {
  private readonly o: { slices: RunningSlices; jobs: DeliveryJobs; stats: StatsCopies };

  constructor(o: { slices: RunningSlices; jobs: DeliveryJobs; stats: StatsCopies }) {
    this.o = o;
  }

  async matched(touched: SubscriptionStats[]): Promise<void> {
    // A slice running here for one of them reads again instead of ending, so its job needs no
    // ensure (a slice already past its last read is covered by the re-check when its job ends).
    const idle = this.o.slices.notify(touched.map((t) => t.id));
    // The counter copy and the jobs do not depend on each other: one round trip's wait, not two.
    await Promise.all([this.o.stats.copy(touched), this.o.jobs.ensure(idle.map((id) => ({ id, nextAttemptAt: 0 })))]);
  }
}
