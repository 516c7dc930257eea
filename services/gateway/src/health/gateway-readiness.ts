import type { Readiness } from "@evb/runtime";
import type { KafkaState } from "./kafka-probe.ts";

/** What a gateway found out about the parts a publish needs. An Error is a failed look. */
export interface GatewayFacts {
  postgres: true | Error;
  redis: true | Error;
  kafka: KafkaState;
  /** Per group: how many indexers have a fresh heartbeat, or why that could not be read. */
  liveIndexers: ReadonlyMap<string, number | Error>;
}

/**
 * Ready only when a publish can be answered: Postgres (topics), Redis (the receipt comes back
 * through it), Kafka (the log) and, in every group, an indexer alive to seal the block. The
 * reason names each part that is missing.
 */
export function judgeGateway(f: GatewayFacts): Readiness {
  const reasons: string[] = [];
  if (f.postgres !== true) reasons.push(`Postgres: ${f.postgres.message}`);
  if (f.redis !== true) reasons.push(`Redis: ${f.redis.message}`);
  if (!f.kafka.ok) reasons.push(f.kafka.reason ?? "Kafka: unreachable");
  const indexers: Record<string, number | null> = {};
  const orphaned: string[] = [];
  for (const [group, n] of f.liveIndexers) {
    indexers[group] = typeof n === "number" ? n : null;
    if (n === 0) orphaned.push(group);
  }
  if (orphaned.length > 0) reasons.push(`no live indexer for group ${orphaned.join(", ")}: publishes there would time out until one runs`);
  const ok = reasons.length === 0;
  return {
    ok,
    ...(ok ? {} : { reason: reasons.join("; ") }),
    postgres: f.postgres === true,
    redis: f.redis === true,
    kafka: f.kafka.ok,
    liveIndexers: indexers,
  };
}

const fact = (p: Promise<unknown>): Promise<true | Error> =>
  p.then(
    () => true as const,
    (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
  );

/** Gathers the facts (one cheap query to each store; Kafka from the probe's cache) and judges them. */
export async function gatewayReadiness(deps: {
  pingPostgres: () => Promise<unknown>;
  pingRedis: () => Promise<unknown>;
  kafka: () => KafkaState;
  groups: readonly string[];
  liveIndexers: (group: string) => Promise<number>;
}): Promise<Readiness> {
  const [postgres, redis, ...counts] = await Promise.all([
    fact(deps.pingPostgres()),
    fact(deps.pingRedis()),
    ...deps.groups.map((g) => deps.liveIndexers(g).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))),
  ]);
  const liveIndexers = new Map(deps.groups.map((g, i) => [g, counts[i] as number | Error]));
  return judgeGateway({ postgres, redis, kafka: deps.kafka(), liveIndexers });
}
