import type { IncomingMessage } from "node:http";
import type { Request } from "express";
import type express from "express";
import type { Redis } from "ioredis";
import { childLogger, type Logger, type Mount, redisKeys, type Spelling } from "@evb/domain";
import type { TopicCatalog } from "../events/publish-operation.ts";
import type { MessageSubscriber } from "../events/receipt-waiter.ts";
import type { CallerChecks } from "../http/access-control.ts";
import { callerAddress } from "../http/caller-address.ts";
import type { UpgradeHandler } from "../http/server.ts";
import { BlockWatch } from "./block-watch.ts";
import { CallerQuota } from "./caller-quota.ts";
import { LiveSubscriptions } from "./live-subscriptions.ts";
import type { SubscriptionLedger } from "./metered-feed.ts";
import { StompEndpoint } from "./stomp-endpoint.ts";
import type { Publisher } from "./stomp-send.ts";
import type { SessionLimits } from "./stomp-session.ts";
import { SubscriptionOwners } from "./subscription-owners.ts";

/** The gateway settings STOMP reads (docs/configuration.md, STOMP_*). */
interface StompSettings {
  REDIS_PREFIX: string;
  STOMP_MAX_FRAME_BYTES: number;
  STOMP_HEARTBEAT_MS: number;
  STOMP_POLL_MS: number;
  STOMP_PAGE_EVENTS: number;
  STOMP_SEND_BUFFER_BYTES: number;
  STOMP_MAX_PENDING_PUBLISHES: number;
  STOMP_MAX_DESTINATION_TOPICS: number;
  MAX_SUBSCRIPTIONS_PER_CALLER: number;
  MAX_TOPIC_FILTERS_PER_CALLER: number;
}

export interface StompServiceOptions {
  settings: StompSettings;
  mounts: readonly Mount[];
  /** The gateway's one publisher, shared with rest/publish. */
  publisher: Publisher;
  topics: TopicCatalog;
  ledger: SubscriptionLedger;
  groups: ReadonlySet<string>;
  /** The pub/sub connection the receipts arrive on; the block hints come on it too. */
  subscriber: MessageSubscriber;
  redis: Redis;
  gatewayId: string;
  /** The same checks the HTTP mounts make (AccessControl.checks). */
  checks: CallerChecks;
  /** This instance's ip:port, known once it listens. */
  node: () => string;
  /** The express app, whose `trust proxy` setting names the caller of an upgrade request. */
  app: express.Express;
  /** The spelling of extension headers, `event-plus` and the SUBSCRIBE headers (BRAND). */
  spelling: Spelling;
  logger: Logger;
}

export interface StompService {
  upgrades: UpgradeHandler;
  /** The live listing (listSubscription reads it; MQTT sessions report to it too). */
  live: LiveSubscriptions;
  /** The block hints and head polls that wake ledger subscriptions (MQTT's too). */
  blocks: BlockWatch;
  /** What each caller holds in live subscriptions on this gateway (MQTT's count too). */
  quota: CallerQuota;
  close(): Promise<void>;
}

/** How long a gateway's STOMP listing outlives it when it dies without closing, ms. */
const LISTING_TTL_MS = 30_000;

/** STOMP over WebSocket, built and started: the upgrade handler for the HTTP server and the listing for listSubscription. */
export async function startStomp(o: StompServiceOptions): Promise<StompService> {
  const s = o.settings;
  const logger = childLogger(o.logger, { component: "stomp" });
  const blocks = new BlockWatch({
    subscriber: o.subscriber,
    channel: redisKeys(s.REDIS_PREFIX).blocksChannel,
    head: (g) => o.ledger.head(g),
    topics: (g, from, to, after, limit) => o.ledger.topicsIn(g, from, to, after, limit),
    pollMs: s.STOMP_POLL_MS,
    logger,
  });
  const live = new LiveSubscriptions({ redis: o.redis, prefix: s.REDIS_PREFIX, gatewayId: o.gatewayId, ttlMs: LISTING_TTL_MS, logger });
  const owners = new SubscriptionOwners({ redis: o.redis, prefix: s.REDIS_PREFIX });
  const quota = new CallerQuota({ subscriptions: s.MAX_SUBSCRIPTIONS_PER_CALLER, filters: s.MAX_TOPIC_FILTERS_PER_CALLER });
  await blocks.start();
  live.start();
  owners.start();
  const limits: SessionLimits = {
    heartbeatMs: s.STOMP_HEARTBEAT_MS,
    pageEvents: s.STOMP_PAGE_EVENTS,
    sendBufferBytes: s.STOMP_SEND_BUFFER_BYTES,
    maxPendingPublishes: s.STOMP_MAX_PENDING_PUBLISHES,
    maxSubscriptions: s.MAX_SUBSCRIPTIONS_PER_CALLER,
  };
  const endpoint = new StompEndpoint({
    mounts: o.mounts,
    deps: { ...o, ledger: o.ledger, blocks, live, owners, quota, limits, maxTopics: s.STOMP_MAX_DESTINATION_TOPICS, now: Date.now, logger },
    maxFrameBytes: s.STOMP_MAX_FRAME_BYTES,
    callerAddress: upgradeCaller(o.app),
    logger,
  });
  return {
    upgrades: endpoint,
    live,
    blocks,
    quota,
    async close() {
      await endpoint.close();
      await blocks.close();
      await live.close();
      owners.close();
    },
  };
}

/**
 * The caller of an upgrade request as express names the caller of any request (its `trust proxy`
 * setting, TRUSTED_PROXIES): the request gets the app's request prototype, as express gives
 * every request it serves.
 */
export function upgradeCaller(app: express.Express): (req: IncomingMessage) => string | null {
  return (req) => callerAddress(Object.setPrototypeOf(req, app.request) as Request);
}
