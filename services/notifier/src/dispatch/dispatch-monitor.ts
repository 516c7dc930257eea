import type { Logger } from "@evb/domain";
import type { DispatchStore } from "@evb/storage";
import { DispatchWatch, type StuckDispatch } from "./dispatch-watch.ts";

export interface DispatchMonitorOptions {
  store: Pick<DispatchStore, "progress">;
  groups: readonly string[];
  /** A cursor standing still behind the head this long is stuck, ms. */
  stuckAfterMs: number;
  logger: Logger;
  now?: () => number;
}

/**
 * Samples every group's dispatch progress in the background (a lock-free read, so it is not
 * held up by the run it watches) and says which groups are stuck. A sample that fails changes
 * nothing: a Postgres outage shows through the dispatcher's own failures.
 */
export class DispatchMonitor {
  private readonly watch: DispatchWatch;
  private readonly timer: NodeJS.Timeout;
  private readonly reported = new Set<string>();
  private sampling = false;
  private readonly o: DispatchMonitorOptions;

  constructor(o: DispatchMonitorOptions) {
    this.o = o;
    this.watch = new DispatchWatch(o.stuckAfterMs);
    // Several samples per bound, so a stall is seen soon after it passes the bound.
    this.timer = setInterval(() => void this.sample(), Math.max(100, Math.min(1_000, Math.floor(o.stuckAfterMs / 4))));
    this.timer.unref();
  }

  stuck(): StuckDispatch[] {
    return this.watch.stuck((this.o.now ?? Date.now)());
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async sample(): Promise<void> {
    if (this.sampling) return;
    this.sampling = true;
    try {
      for (const groupId of this.o.groups) {
        const p = await this.o.store.progress(groupId).catch(() => null);
        if (p) this.watch.observe({ groupId, ...p }, (this.o.now ?? Date.now)());
      }
      const stuck = new Map(this.stuck().map((s) => [s.groupId, s]));
      for (const [g, s] of stuck)
        if (!this.reported.has(g)) {
          this.reported.add(g);
          this.o.logger.warn(s, "dispatch is stuck: its cursor has not moved while the ledger is ahead; /readyz reports it");
        }
      for (const g of this.reported)
        if (!stuck.has(g)) {
          this.reported.delete(g);
          this.o.logger.info({ groupId: g }, "dispatch moves again");
        }
    } finally {
      this.sampling = false;
    }
  }
}
