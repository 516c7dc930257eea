import type { Redis } from "ioredis";
import { type AddressPolicy, bestEffort, type Logger, redisKeys } from "@evb/domain";
import {
  type DeliveryAttemptStore,
  type DeliveryStore,
  type EventReads,
  type ResendStore,
  type SubscriptionRow,
  type SubscriptionSettingsStore,
  type SubscriptionStore,
  statsOfRow,
} from "@evb/storage";
import type { LiveSubscriptionSource } from "../stomp/live-subscriptions.ts";
import { dropStats, type HostLookup, STATS_MIRROR_TIMEOUT_MS, statsEntry, writeStats } from "@evb/subscriptions";

export interface SubscriptionDeps {
  store: SubscriptionStore;
  deliveries: DeliveryStore;
  /** The delivery-attempt log (admin/deliveryAttempts). */
  attemptLog: DeliveryAttemptStore;
  /** Each subscription's own settings (admin/subscriptionSettings, subscribe's optional parameters). */
  settings: Pick<SubscriptionSettingsStore, "get" | "change" | "pausedOf">;
  /** Resends asked for by admin/resendEvent, sent by the notifiers. */
  resends: Pick<ResendStore, "request">;
  /** One event by id, for admin/resendEvent and a replay from an event. */
  events: Pick<EventReads, "event">;
  groups: ReadonlySet<string>;
  /** Which callback addresses may be dialled (CALLBACK_ALLOWED_CIDRS). */
  policy: AddressPolicy;
  /** DNS port; the system resolver when absent. */
  lookup?: HostLookup;
  /** Bound of subscribe's connectivity check, ms (default 5000). */
  connectTimeoutMs: number;
  /** MAX_SUBSCRIPTIONS_PER_CALLER: live subscriptions one owner (API key, or address) may hold. */
  maxPerCaller: number;
  /** This node instance (ip:port): the owner of the subscriptions it takes. */
  selfAddress: () => string;
  /**
   * Writes the subscription's row as it stands to Kafka (its group's subscriptions topic) and
   * resolves once Kafka has it: subscribe and unSubscribe answer only after that, so a rebuilt
   * ledger has every subscription they acknowledged. Rejects when Kafka did not take it.
   */
  recordSubscription: (id: string) => Promise<void>;
  /** The live STOMP subscriptions of every gateway, which listSubscription lists beside the callback ones. */
  stomp?: LiveSubscriptionSource;
  redis: Redis;
  redisPrefix: string;
  now: () => number;
  logger: Logger;
}

/**
 * Runs a Redis side effect of a subscription change without letting Redis decide how long the
 * HTTP request takes. Postgres has already committed the change; Redis only caches counters and
 * carries hints (the notifiers' sweep finds any work without them).
 */
function sideEffect(deps: SubscriptionDeps, what: string, effect: () => Promise<unknown>): Promise<void> {
  return bestEffort(effect, { what, cost: "Postgres holds the truth", timeoutMs: STATS_MIRROR_TIMEOUT_MS, logger: deps.logger });
}

/** Copies a subscription's counters to Redis, where admin/listSubscription reads them (best effort). */
export function publishStats(deps: SubscriptionDeps, row: SubscriptionRow): Promise<void> {
  return sideEffect(deps, "copy subscription counters", () => writeStats(deps.redis, deps.redisPrefix, [statsEntry(statsOfRow(row))]));
}

/** Drops an ended subscription's counter copy (best effort: listSubscription lists live rows only). */
export function unpublishStats(deps: SubscriptionDeps, row: SubscriptionRow): Promise<void> {
  return sideEffect(deps, "drop subscription counters", () => dropStats(deps.redis, deps.redisPrefix, row.nodeInstance, row.id));
}

/**
 * Asks the notifiers to start delivery for these subscriptions now (a released dead letter, a
 * resumed subscription). Best effort: the notifiers' periodic sweep finds them anyway.
 */
export async function wake(deps: SubscriptionDeps, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sideEffect(deps, "wake the notifiers", () => deps.redis.publish(redisKeys(deps.redisPrefix).wakeChannel, JSON.stringify(ids)));
}
