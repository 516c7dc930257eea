import type { Redis } from "ioredis";
import { redisKeys } from "@evb/domain";

/**
 * A subscription's counters, in the vocabulary the code uses everywhere (storage's
 * SubscriptionCounters): `delivered` (wire: notifiedEventCount), `pending` (notifyingEventCount),
 * `notifiedAt` (notifyTimeStamp, epoch ms of the last delivery; null before the first) and `rev`
 * (orders racing copies).
 */
export interface StatsCopy {
  delivered: number;
  pending: number;
  notifiedAt: number | null;
  rev: number;
}

/** One subscription's counters to copy, and whose they are (the owning node instance's hash). */
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

/** A subscription's counters as the ledger keeps them (storage's SubscriptionStats, which has more). */
export type LedgerCounters = StatsEntry;

/** The entry `writeStats` copies for a ledger row's counters (what every writer of the copy passes). */
export function statsEntry(c: LedgerCounters): StatsEntry {
  return { id: c.id, nodeInstance: c.nodeInstance, delivered: c.delivered, pending: c.pending, notifiedAt: c.notifiedAt, rev: c.rev };
}

/**
 * The copy as stored in Redis. Its field names are older than the code's vocabulary and stay, so
 * that copies written by a node of another version read the same: these two functions are the
 * only place they appear.
 */
interface StoredCopy {
  notified: number;
  notifying: number;
  notifyTs: number | null;
  rev: number;
}

function stored(c: StatsCopy): StoredCopy {
  return { notified: c.delivered, notifying: c.pending, notifyTs: c.notifiedAt, rev: c.rev };
}

function fromStored(s: StoredCopy): StatsCopy {
  return { delivered: s.notified, pending: s.notifying, notifiedAt: s.notifyTs, rev: s.rev };
}

/**
 * The counters admin/listSubscription shows: the Redis copy, unless the row just read from
 * Postgres is newer (a copy lost to a crash or a Redis blip) or there is no copy.
 */
export function newestCounters(row: StatsCopy, copy: StatsCopy | undefined): StatsCopy {
  return copy && copy.rev >= row.rev ? copy : row;
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
  const args = entries.flatMap((e) => [e.id, String(e.rev), JSON.stringify(stored(e))]);
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
    if (v) out.set(id, fromStored(JSON.parse(v) as StoredCopy));
  });
  return out;
}

export async function dropStats(redis: Redis, prefix: string, nodeInstance: string, id: string): Promise<void> {
  await redis.hdel(statsKey(prefix, nodeInstance), id);
}
