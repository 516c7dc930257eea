import type { Logger } from "@evb/domain";
import { NodeRegistry } from "@evb/registry";
import { type KafkaState, postgresCheck, type Readiness, redisCheck } from "@evb/runtime";
import type { GatewayConfig } from "../config.ts";
import type { PublishProgress } from "../events/receipt-waiter.ts";
import { gatewayReadiness, lookAtRedis } from "./gateway-readiness.ts";

export interface GatewayChecks {
  /** What the checks found last, judged; never waits. */
  readiness(): Readiness;
  /** Starts the checks; resolves once each has answered (or timed out) once. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The gateway's readiness, checked in the background: Postgres and Redis (with the groups' live
 * indexers) on connections of their own, every 0.5 s, each look bounded to 1 s; Kafka and the
 * ledger come from their own background watchers (`KafkaProbe`, `LedgerGuard`), and whether
 * publishes are being sealed from the receipts (`ReceiptWaiter.progress`).
 */
export function gatewayChecks(
  config: GatewayConfig,
  logger: Logger,
  watchers: { kafka: () => KafkaState; ledger: () => string | null; publishes: () => PublishProgress },
): GatewayChecks {
  const postgres = postgresCheck(config, logger);
  const redis = redisCheck(config, logger, (r) =>
    lookAtRedis(r, new NodeRegistry({ redis: r, prefix: config.REDIS_PREFIX }), config.GROUP_IDS),
  );
  return {
    readiness: () =>
      gatewayReadiness({
        postgres: postgres.state(),
        redis: redis.state(),
        kafka: watchers.kafka(),
        ledger: watchers.ledger(),
        groups: config.GROUP_IDS,
        publishes: watchers.publishes(),
      }),
    start: async () => {
      await Promise.all([postgres.start(), redis.start()]);
    },
    close: async () => {
      await Promise.all([postgres.close(), redis.close()]);
    },
  };
}
