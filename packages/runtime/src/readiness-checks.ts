import { type Redis, ReplyError } from "ioredis";
import type { SharedConfig } from "@evb/config";
import type { Logger } from "@evb/domain";
import { openReadinessPostgres, openReadinessRedis } from "./adapters.ts";
import { BackgroundCheck, type Checked } from "./background-check.ts";

/**
 * How often each readiness check looks, ms. A dependency lost shows within this plus
 * `READINESS_TIMEOUT_MS` (1.25 s), one regained within this (0.25 s) of answering again: readiness
 * must be back within 2 s of a dependency, and some wait on two looks in a row (a gateway's
 * registry look waits for the indexers' heartbeat, which waits for their reconnect).
 */
export const READINESS_INTERVAL_MS = 250;

/** How long one readiness look may take, ms: past it the dependency counts as not answering. */
export const READINESS_TIMEOUT_MS = 1_000;

/**
 * Postgres as readiness sees it: `sql` (default `SELECT 1`) every interval on a pool of its own
 * whose every wait is bounded by the timeout (`openReadinessPostgres`).
 */
export function postgresCheck(
  config: SharedConfig,
  logger: Logger,
  o: { name?: string; sql?: string; onChange?: (state: Checked<void>) => void } = {},
): BackgroundCheck<void> {
  const pool = openReadinessPostgres(config, logger, READINESS_TIMEOUT_MS);
  const sql = o.sql ?? "SELECT 1";
  return new BackgroundCheck({
    name: o.name ?? "Postgres",
    run: async () => {
      await pool.query(sql);
    },
    intervalMs: READINESS_INTERVAL_MS,
    timeoutMs: READINESS_TIMEOUT_MS,
    release: () => pool.end(),
    onChange: o.onChange,
    logger,
  });
}

/**
 * Redis as readiness sees it, on a connection of its own (`openReadinessRedis`: 1 s command and
 * connect timeouts). `lookWith` makes the look from that connection: a PING, or
 * reads that need Redis anyway (the gateway's registry of live indexers).
 */
export function redisCheck<T>(
  config: SharedConfig,
  logger: Logger,
  lookWith: (redis: Redis) => () => Promise<T>,
  onChange?: (state: Checked<T>) => void,
): BackgroundCheck<T> {
  const redis = openReadinessRedis(config, logger, READINESS_TIMEOUT_MS);
  const look = lookWith(redis);
  return new BackgroundCheck({
    name: "Redis",
    run: async () => {
      try {
        return await look();
      } catch (err) {
        // No answer (not an error reply): the next look goes over a fresh connection. Bytes
        // written to a silent peer wait in TCP's retransmission backoff, which after an outage of
        // 25 s keeps an old connection silent for up to 13 s more; a new one answers at once.
        if (err instanceof ReplyError) throw err;
        redis.disconnect(true);
        // A command flushed because the connection was lost (ioredis names it by its class).
        if (err instanceof Error && err.name === "MaxRetriesPerRequestError") throw new Error("no connection");
        throw err;
      }
    },
    intervalMs: READINESS_INTERVAL_MS,
    timeoutMs: READINESS_TIMEOUT_MS,
    release: () => redis.disconnect(),
    onChange,
    logger,
  });
}

/** Why a check does not pass now, named ("Postgres: no answer within 1000 ms"), or null when it passes. */
export function checkReason(name: string, c: Checked<unknown>): string | null {
  return c.ok ? null : `${name}: ${c.reason}`;
}
