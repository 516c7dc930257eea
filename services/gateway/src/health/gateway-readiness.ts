import type { Checked, KafkaState, Readiness } from "@evb/runtime";
import type { PublishProgress } from "../events/receipt-waiter.ts";

/**
 * Publishes waiting this long with no receipt for as long mean nothing is sealed, whatever the
 * heartbeats say (ms): an indexer that heartbeats "can seal" while its Kafka writes hang, or a
 * zombie cut off from its group, looked alive to the gateways on the multi-host bed while no
 * publish was acknowledged for 20 s.
 */
const UNSEALED_AFTER_MS = 5_000;

/** What a gateway found out about the parts a publish needs. An Error is a failed look. */
export interface GatewayFacts {
  postgres: true | Error;
  redis: true | Error;
  kafka: KafkaState;
  /** Why the ledger in Postgres is not answered from (LedgerGuard), or null. */
  ledger?: string | null;
  /** Per group: the indexers with a fresh heartbeat (and whether each can seal), or why that could not be read. */
  liveIndexers: ReadonlyMap<string, readonly IndexerBeat[] | Error>;
  /** How this gateway's own publishes fare (absent: not judged). */
  publishes?: PublishProgress;
}

/** An indexer of a group as its last heartbeat shows it. */
export interface IndexerBeat {
  sealerIndex: number;
  /** false: it said it cannot seal the group (refused log, failed seal, Kafka or the ledger unreachable). */
  canSeal?: boolean;
  reason?: string;
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
  if (f.ledger) reasons.push(f.ledger);
  const indexers: Record<string, number | null> = {};
  const orphaned: string[] = [];
  const blocked: string[] = [];
  for (const [group, beats] of f.liveIndexers) {
    if (beats instanceof Error) {
      // The registry is in Redis: a failed look is Redis's reason, named above.
      indexers[group] = null;
      continue;
    }
    // Another indexer's heartbeat, or a zombie's own, is no use when none of them can seal.
    const able = beats.filter((b) => b.canSeal !== false);
    indexers[group] = able.length;
    if (beats.length === 0) orphaned.push(group);
    else if (able.length === 0)
      blocked.push(`${group} (${beats.map((b) => `sealer ${b.sealerIndex}: ${b.reason ?? "cannot seal"}`).join("; ")})`);
  }
  if (orphaned.length > 0) reasons.push(`no live indexer for group ${orphaned.join(", ")}: publishes there would time out until one runs`);
  if (blocked.length > 0) reasons.push(`no indexer can seal group ${blocked.join(", ")} now: publishes there would time out`);
  const p = f.publishes;
  if (p && p.waiting > 0 && p.oldestMs >= UNSEALED_AFTER_MS && p.sinceReceiptMs >= UNSEALED_AFTER_MS) {
    reasons.push(
      `publishes are not being sealed: ${p.waiting} wait, the oldest for ${Math.round(p.oldestMs / 1000)} s, none answered for ${Math.round(p.sinceReceiptMs / 1000)} s`,
    );
  }
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

const fact = (c: Checked<unknown>): true | Error => (c.ok ? true : new Error(c.reason));

/** Redis, as the gateway's readiness looks at it: a PING, then each group's indexers with a fresh heartbeat. */
export function lookAtRedis(
  redis: { ping(): Promise<unknown> },
  registry: { chainNodes(group: string): Promise<readonly (IndexerBeat & { active: boolean })[]> },
  groups: readonly string[],
): () => Promise<ReadonlyMap<string, readonly IndexerBeat[]>> {
  return async () => {
    await redis.ping();
    const beats = await Promise.all(groups.map(async (g) => (await registry.chainNodes(g)).filter((n) => n.active)));
    return new Map(groups.map((g, i) => [g, beats[i] ?? []]));
  };
}

/**
 * Judges what the background checks found last (Postgres, Redis with the live indexers, Kafka's
 * probe, the ledger guard): reads only, so a probe is answered at once whatever is down.
 */
export function gatewayReadiness(deps: {
  postgres: Checked<unknown>;
  redis: Checked<ReadonlyMap<string, readonly IndexerBeat[]>>;
  kafka: KafkaState;
  ledger?: string | null;
  groups: readonly string[];
  publishes?: PublishProgress;
}): Readiness {
  const redis = deps.redis;
  // The registry is read in Redis's look: when that failed, each group is an unknown (null).
  const liveIndexers = new Map(deps.groups.map((g) => [g, redis.ok ? (redis.value.get(g) ?? []) : new Error(redis.reason)]));
  return judgeGateway({
    postgres: fact(deps.postgres),
    redis: fact(redis),
    kafka: deps.kafka,
    ledger: deps.ledger ?? null,
    liveIndexers,
    ...(deps.publishes ? { publishes: deps.publishes } : {}),
  });
}
