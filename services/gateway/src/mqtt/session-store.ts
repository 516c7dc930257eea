import type { Redis } from "ioredis";
import { z } from "zod";
import { TIMED_OUT, withTimeout } from "@evb/domain";

/** One filter of a persistent session and the ledger position it continues after. */
export const StoredSubscription = z.object({
  filter: z.string(),
  qos: z.union([z.literal(0), z.literal(1)]),
  group: z.string(),
  position: z.object({ height: z.number().int().min(0), idx: z.number().int().min(-1) }),
});
export type StoredSubscription = z.infer<typeof StoredSubscription>;

/**
 * A persistent MQTT session between connections: its filters and positions, nothing in memory,
 * and whose it is (SessionKey.owner; absent in sessions stored before owners were kept: anybody's).
 */
export const StoredSession = z.object({ v: z.literal(1), owner: z.string().optional(), subscriptions: z.array(StoredSubscription) });
export type StoredSession = z.infer<typeof StoredSession>;

/** Where persistent sessions are kept between connections, by client id. */
export interface SessionStore {
  /** The stored session, or null; throws when the store cannot say (the CONNECT is then refused, not started empty). */
  load(clientId: string): Promise<StoredSession | null>;
  /**
   * Keeps the session for `ttlMs` from now; throws when it could not. `ending`: the connection
   * ended and this is its last write (until the client comes back).
   */
  save(clientId: string, session: StoredSession, ttlMs: number, ending?: boolean): Promise<void>;
  drop(clientId: string): Promise<void>;
}

/** The key of one client id's session (under REDIS_PREFIX, beside the keys of packages/domain's redis-keys.ts). */
function mqttSessionKey(prefix: string, clientId: string): string {
  return `${prefix}:mqtt:session:${clientId}`;
}

/** The bound on each MQTT Redis command (sessions, client ids): a silent Redis refuses a CONNECT, never hangs it. */
export const REDIS_TIMEOUT_MS = 2_000;

export async function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  const r = await withTimeout(p, REDIS_TIMEOUT_MS);
  if (r === TIMED_OUT) throw new Error(`Redis did not answer in time (${what})`);
  return r;
}

/**
 * Persistent sessions in Redis: one key per client id holding its filters and ledger positions,
 * expiring when the session does. The events themselves stay in the ledger, so a session that
 * resumes on any gateway (this one restarted, or another) reads on from its positions. Redis
 * alone may lose a key (a flush, a Redis without persistence restarted): the gateway layers it
 * over the durable copy in Postgres (DurableSessionStore, durable-session-store.ts).
 */
export class RedisSessionStore implements SessionStore {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  async load(clientId: string): Promise<StoredSession | null> {
    const raw = await bounded(this.redis.get(mqttSessionKey(this.prefix, clientId)), "load an MQTT session");
    if (raw === null) return null;
    try {
      const parsed = StoredSession.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  }

  async save(clientId: string, session: StoredSession, ttlMs: number): Promise<void> {
    const ms = Math.max(1, Math.min(Math.round(ttlMs), 2 ** 31));
    await bounded(this.redis.set(mqttSessionKey(this.prefix, clientId), JSON.stringify(session), "PX", ms), "save an MQTT session");
  }

  async drop(clientId: string): Promise<void> {
    await bounded(this.redis.del(mqttSessionKey(this.prefix, clientId)), "drop an MQTT session");
  }
}
