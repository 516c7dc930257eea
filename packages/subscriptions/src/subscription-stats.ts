import type { Redis } from "ioredis";
import { redisKeys } from "@evb/domain";

/** Counters of one subscription as admin/listSubscription shows them. */
export interface StatsCopy {
  notified: number;
  notifying: number;
  /** Epoch ms of the last successful delivery; null before the first. */
  notifyTs: number | null;
  rev: number;
}

export interface StatsEntry extends StatsCopy {
  id: string;
  nodeInstance: string;
}

/**
 * How long a counter copy (or another Redis side effect of a subscription change) may take, ms.
 * Redis connections wait out outages (maxRetriesPerRequest: null), so an unbounded await would
 * hang the HTTP request; Postgres holds the truth and the copy is only a cache.
 */
export const STATS_MIRROR_TIMEOUT_MS = 1_000;

/** A subscription's counters as the ledger keeps them (storage's SubscriptionStats). */
export interface LedgerCounters {
  id: string;
  nodeInstance: string;
  delivered: number;
  pending: number;
  notifiedAt: number | null;
  rev: number;
}

/**
 * The one mapping from the ledger's counter names to the names admin/listSubscription shows
 * (notified, notifying, notifyTs), used by every writer of the copy.
 */
export function statsEntry(c: LedgerCounters): StatsEntry {
  return { id: c.id, nodeInstance: c.nodeInstance, notified: c.delivered, notifying: c.pending, notifyTs: c.notifiedAt, rev: c.rev };
}

function statsKey(prefix: string, nodeInstance: string): string {
  return redisKeys(prefix).statsKey(nodeInstance);
}

// Writers race (the dispatcher adds to the backlog while a worker drains it); each copy carries
// the Postgres row's stats_rev, and an older copy never overwrites a newer one.
const WRITE_NEWER = `
for i = 1, #KEYS do
  local id = ARGV[i * 3 - 2]
  local rev = tonumber(ARGV[i * 3 - 1])
  local cur = redis.call('HGET', KEYS[i], id)
  if (not cur) or (tonumber(cjson.decode(cur).rev) or -1) < rev then
    redis.call('HSET', KEYS[i], id, ARGV[i * 3])
  end
end
return 0`;

/**
 * Copies counters into Redis (newest revision wins). The values come from Postgres, where they
 * change in the same statement as the delivery state, so the copy is exact once deliveries settle.
 */
export async function writeStats(redis: Redis, prefix: string, entries: readonly StatsEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const keys = entries.map((e) => statsKey(prefix, e.nodeInstance));
  const args = entries.flatMap((e) => [
    e.id,
    String(e.rev),
    JSON.stringify({ notified: e.notified, notifying: e.notifying, notifyTs: e.notifyTs, rev: e.rev }),
  ]);
  await redis.eval(WRITE_NEWER, keys.length, ...keys, ...args);
}

export async function readStats(
  redis: Redis,
  prefix: string,
  nodeInstance: string,
  ids: readonly string[],
): Promise<Map<string, StatsCopy>> {
  const out = new Map<string, StatsCopy>();
  if (ids.length === 0) return out;
  const values = await redis.hmget(statsKey(prefix, nodeInstance), ...ids);
  ids.forEach((id, i) => {
    const v = values[i];
    if (v) out.set(id, JSON.parse(v) as StatsCopy);
  });
  return out;
}

export async function dropStats(redis: Redis, prefix: string, nodeInstance: string, id: string): Promise<void> {
  await redis.hdel(statsKey(prefix, nodeInstance), id);
}
