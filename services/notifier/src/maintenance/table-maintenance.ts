import type { Logger } from "@evb/domain";
import type { MaintenanceRound } from "@evb/storage";

export interface TableMaintenanceOptions {
  /** One round: vacuums the churning tables, or says another notifier is at it. */
  vacuum: () => Promise<MaintenanceRound>;
  /** Milliseconds between rounds (TABLE_MAINTENANCE_MS); 0 runs none. */
  intervalMs: number;
  logger: Logger;
  /** Calls `tick` every `ms` until the returned stop is called (setInterval, unref'd, by default). */
  every?: (tick: () => void, ms: number) => () => void;
}

function every(tick: () => void, ms: number): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Reclaims the churning tables' dead rows on a fixed schedule, so that they stay bounded when
 * Postgres runs without autovacuum (docs/configuration.md, TABLE_MAINTENANCE_MS). Rounds never
 * overlap. A failing round is logged once, when the failures start, and once when a round
 * succeeds again: a Postgres that refuses VACUUM for hours writes two lines, not one a round.
 */
export class TableMaintenance {
  private readonly o: TableMaintenanceOptions;
  private readonly stop: () => void;
  private running: Promise<void> | null = null;
  private failingSince: number | null = null;

  constructor(o: TableMaintenanceOptions) {
    this.o = o;
    this.stop = o.intervalMs > 0 ? (o.every ?? every)(() => void this.round(), o.intervalMs) : () => {};
  }

  /** Runs a round now (or joins the one running); never rejects. */
  round(): Promise<void> {
    this.running ??= this.runOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async runOnce(): Promise<void> {
    const started = Date.now();
    try {
      const outcome = await this.o.vacuum();
      if (this.failingSince !== null) {
        this.o.logger.info({ failingForMs: started - this.failingSince }, "table maintenance works again");
        this.failingSince = null;
      }
      if (outcome === "done") this.o.logger.debug({ tookMs: Date.now() - started }, "vacuumed the churning tables");
    } catch (err) {
      if (this.failingSince === null) {
        this.failingSince = started;
        this.o.logger.warn(
          { err },
          "table maintenance failed; dead rows are not reclaimed until a round succeeds (logged again only then)",
        );
      }
    }
  }

  close(): void {
    this.stop();
  }
}
