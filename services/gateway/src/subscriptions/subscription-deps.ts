import type { Redis } from "ioredis";
import type { AddressPolicy, Logger } from "@evb/domain";
import type { DeliveryAttemptStore, DeliveryStore, SubscriptionRow, SubscriptionStore } from "@evb/storage";
import { dropStats, type HostLookup, STATS_MIRROR_TIMEOUT_MS, TIMED_OUT, wakeChannel, withTimeout, writeStats } from "@evb/subscriptions";

export interface SubscriptionDeps {
  store: SubscriptionStore;
  deliveries: DeliveryStore;
  /** The delivery-attempt log (admin/deliveryAttempts). */
  attemptLog: DeliveryAttemptStore;
  groups: ReadonlySet<string>;
  /** Which callback addresses may be dialled (CALLBACK_ALLOWED_CIDRS). */
  policy: AddressPolicy;
  /** DNS port; the system resolver when absent. */
  lookup?: HostLookup;
  /** Bound of subscribe's connectivity check, ms (default 5000). */
  connectTimeoutMs: number;
  /** This node instance (ip:port): the owner of the subscriptions it takes. */
  selfAddress: () => string;
  redis: Redis;
  redisPrefix: string;
  now: () => number;
  logger: Logger;
}

/**
 * Runs a Redis side effect of a subscription change without letting Redis decide how long the
 * HTTP request takes: bounded by STATS_MIRROR_TIMEOUT_MS, failures and timeouts logged, never
 * thrown. Postgres has already committed the change; Redis only caches counters and carries
 * hints (the notifiers' sweep finds any work without them).
 */
async function bestEffort(deps: SubscriptionDeps, what: string, effect: () => Promise<unknown>): Promise<void> {
  try {
    const r = await withTimeout(effect(), STATS_MIRROR_TIMEOUT_MS);
    if (r === TIMED_OUT)
      deps.logger.warn({ what, timeoutMs: STATS_MIRROR_TIMEOUT_MS }, "Redis did not answer in time; skipped (Postgres holds the truth)");
  } catch (err) {
    deps.logger.warn({ what, err: (err as Error).message }, "Redis side effect failed; skipped (Postgres holds the truth)");
  }
}

/** Copies a subscription's counters to Redis, where admin/listSubscription reads them (best effort). */
export function publishStats(deps: SubscriptionDeps, row: SubscriptionRow): Promise<void> {
  return bestEffort(deps, "copy subscription counters", () =>
    writeStats(deps.redis, deps.redisPrefix, [
      {
        id: row.id,
        nodeInstance: row.nodeInstance,
        notified: row.deliveredCount,
        notifying: row.pendingCount,
        notifyTs: row.notifiedAt,
        rev: row.statsRev,
      },
    ]),
  );
}

/** Drops an ended subscription's counter copy (best effort: listSubscription lists live rows only). */
export function unpublishStats(deps: SubscriptionDeps, row: SubscriptionRow): Promise<void> {
  return bestEffort(deps, "drop subscription counters", () => dropStats(deps.redis, deps.redisPrefix, row.nodeInstance, row.id));
}

/**
 * Asks the notifiers to start delivery for these subscriptions now (a released dead letter, a
 * resumed subscription). Best effort: the notifiers' periodic sweep finds them anyway.
 */
export async function wake(deps: SubscriptionDeps, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await bestEffort(deps, "wake the notifiers", () => deps.redis.publish(wakeChannel(deps.redisPrefix), JSON.stringify(ids)));
}
