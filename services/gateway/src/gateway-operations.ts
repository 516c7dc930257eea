import { childLogger } from "@evb/domain";
import type { ChainLogWriter, LogWriterCore } from "@evb/eventlog";
import type { NodeRegistry } from "@evb/registry";
import {
  ApiKeyStore,
  ChainStore,
  DeliveryAttemptStore,
  DeliveryStore,
  EventReads,
  EventStore,
  ResendStore,
  SubscriptionRecords,
  SubscriptionSettingsStore,
  SubscriptionStore,
} from "@evb/storage";
import { addressPolicy } from "@evb/subscriptions";
import { adminOperations } from "./admin/admin-operations.ts";
import type { BuildInfo } from "./admin/build-info.ts";
import { batchOperation } from "./console/batch-operation.ts";
import { RedisHistory } from "./console/metrics-history.ts";
import { metricsHistoryOperation } from "./console/metrics-history-operation.ts";
import { subscriptionStatesOperation } from "./console/subscription-states-operation.ts";
import { eventAdminOperations } from "./events/event-admin-operations.ts";
import { getEventOperation } from "./events/get-event-operation.ts";
import { publishBatchOperation } from "./events/publish-batch-operation.ts";
import { EventPublisher, type PublishDeps, publishOperation } from "./events/publish-operation.ts";
import type { ReceiptWaiter } from "./events/receipt-waiter.ts";
import { type AccessControl, accessControl } from "./http/access-control.ts";
import { ApiKeyVerifier } from "./http/api-key-verifier.ts";
import type { Operation } from "./http/operation.ts";
import { PublishRateLimiter } from "./http/publish-rate-limit.ts";
import type { GatewayMetrics } from "./observability/gateway-metrics.ts";
import { subscriptionOperations } from "./subscriptions/subscription-operations.ts";
import { subscriptionRecorder } from "./subscriptions/subscription-recorder.ts";
import { topicOperations } from "./topics/topic-operations.ts";
import { topicRecorder } from "./topics/topic-recorder.ts";
import type { GatewayCore, StompListing } from "./gateway-parts.ts";

/** Who may call what: allowed networks, basic users and, when API_KEYS is set, the keys with their publish rate. */
function gatewayAccess(core: GatewayCore): AccessControl {
  const { config, logger } = core;
  return accessControl({
    allowed: config.API_ALLOWED_CIDRS,
    basicUsers: config.API_BASIC_AUTH,
    keys: config.API_KEYS
      ? {
          verifier: new ApiKeyVerifier({ lookup: new ApiKeyStore(core.pool), cacheMs: config.API_KEY_CACHE_MS, now: Date.now }),
          limiter: new PublishRateLimiter({ redis: core.redis, prefix: config.REDIS_PREFIX, logger }),
        }
      : undefined,
    logger,
  });
}

/** rest/subscribe and the other subscription operations, over the ledger's stores and the STOMP listing. */
function gatewaySubscriptionOperations(
  core: GatewayCore,
  o: {
    recorded: { writer: ChainLogWriter; topicPrefix: string; timeoutMs: number };
    eventReads: EventReads;
    settings: SubscriptionSettingsStore;
    listing: StompListing;
  },
): Operation[] {
  const { config, pool } = core;
  return subscriptionOperations({
    store: new SubscriptionStore(pool),
    recordSubscription: subscriptionRecorder({ ...o.recorded, records: new SubscriptionRecords(pool) }),
    deliveries: new DeliveryStore(pool),
    attemptLog: new DeliveryAttemptStore(pool),
    resends: new ResendStore(pool),
    settings: o.settings,
    events: o.eventReads,
    groups: core.groups,
    policy: addressPolicy(config),
    connectTimeoutMs: config.CALLBACK_CONNECT_TIMEOUT_MS,
    maxPerCaller: config.MAX_SUBSCRIPTIONS_PER_CALLER,
    selfAddress: core.node.get,
    redis: core.redis,
    redisPrefix: config.REDIS_PREFIX,
    now: Date.now,
    logger: childLogger(core.logger, { component: "subscriptions" }),
    stomp: o.listing,
  });
}

/**
 * Every operation the HTTP mounts serve (topics, publish, events, admin, subscriptions and the
 * console's), with the one publisher HTTP, STOMP and MQTT share and the access control they check.
 */
export function gatewayOperations(
  core: GatewayCore,
  o: {
    writer: LogWriterCore;
    receipts: ReceiptWaiter;
    chainLog: ChainLogWriter;
    registry: NodeRegistry;
    metrics: GatewayMetrics;
    buildInfo: BuildInfo;
    listing: StompListing;
  },
): { operations: Operation[]; publisher: EventPublisher; access: AccessControl } {
  const { config, pool, groups, spelling, logger } = core;
  const now = Date.now;
  const publishDeps: PublishDeps = {
    topics: core.topics,
    groups,
    log: o.writer,
    receipts: o.receipts,
    gatewayId: core.gatewayId,
    kafkaTopicPrefix: config.KAFKA_TOPIC_PREFIX,
    publishTimeoutMs: config.PUBLISH_TIMEOUT_MS,
    idempotencyRetentionMs: config.IDEMPOTENCY_RETENTION_MS,
    now,
    logger: childLogger(logger, { component: "publish" }),
    observe: (group, outcome, seconds) => o.metrics.publish(group, outcome, seconds),
    spelling,
  };
  // One publisher for HTTP and STOMP: its counter names each publish for the receipt waiter.
  const publisher = new EventPublisher(publishDeps);
  const access = gatewayAccess(core);
  const eventReads = new EventReads(pool, config.DATABASE_QUERY_TIMEOUT_MS);
  const settings = new SubscriptionSettingsStore(pool);
  const recorded = { writer: o.chainLog, topicPrefix: config.KAFKA_TOPIC_PREFIX, timeoutMs: config.PUBLISH_TIMEOUT_MS };
  const operations: Operation[] = [
    ...topicOperations({ topics: core.topics, groups, now, recordTopic: topicRecorder(recorded) }),
    publishOperation(publishDeps, publisher),
    publishBatchOperation(publishDeps, publisher),
    getEventOperation({ events: new EventStore(pool), groups, spelling }),
    ...eventAdminOperations({ reads: eventReads, groups, spelling }),
    ...adminOperations({
      buildInfo: o.buildInfo,
      groupList: config.GROUP_IDS,
      chain: new ChainStore(pool),
      registry: o.registry,
      selfAddress: core.node.get,
    }),
    ...gatewaySubscriptionOperations(core, { recorded, eventReads, settings, listing: o.listing }),
  ];
  // What the web console reads: subscription states, its charts' history, and its batched reads over every operation.
  operations.push(
    subscriptionStatesOperation({
      store: new SubscriptionStore(pool),
      paused: (ids) => settings.pausedOf(ids),
      alertUrls: (ids) => settings.alertUrlsOf(ids),
      stomp: o.listing,
      groups,
    }),
    metricsHistoryOperation({
      port: new RedisHistory(core.redis, config.REDIS_PREFIX),
      groups,
      intervalMs: config.CONSOLE_HISTORY_INTERVAL_MS,
      now,
    }),
    batchOperation({ operations, access, logger: childLogger(logger, { component: "http" }) }),
  );
  return { operations, publisher, access };
}
