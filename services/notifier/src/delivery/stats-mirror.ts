import { bestEffort, type Logger } from "@evb/domain";
import type { SubscriptionStats } from "@evb/storage";
import { STATS_MIRROR_TIMEOUT_MS, statsEntry, writeStats } from "@evb/subscriptions";
import type { Redis } from "ioredis";

/** Where subscription counters are copied after each write of them (`StatsMirror` in production). */
export interface StatsCopies {
  /** Copies these counters; a failure (not a timeout) is thrown. */
  copy(stats: SubscriptionStats[]): Promise<void>;
}

/**
 * The counters' copies in Redis, which listSubscription reads. They are a cache (Postgres holds
 * the truth): each copy is bounded, so a Redis stall does not also stall a delivery slice that
 * still holds its Postgres lease. A failure (not a timeout) is passed on, so the dispatcher or
 * the slice sees it.
 */
export class StatsMirror implements StatsCopies {
  private readonly o: { redis: Redis; prefix: string; logger: Logger };

  constructor(o: { redis: Redis; prefix: string; logger: Logger }) {
    this.o = o;
  }

  copy(stats: SubscriptionStats[]): Promise<void> {
    const { redis, prefix, logger } = this.o;
    return bestEffort(() => writeStats(redis, prefix, stats.map(statsEntry)), {
      what: `copy ${stats.length} subscription counters`,
      cost: "they follow with the next change",
      timeoutMs: STATS_MIRROR_TIMEOUT_MS,
      logger,
      rethrow: true,
    });
  }
}
