import type { Redis } from "ioredis";
import { redisKeys, TIMED_OUT, withTimeout } from "@evb/domain";

/**
 * How long a STOMP subscription id stays its owner's after its subscription was last live, ms: a
 * day, so a client that reconnects (the Java client does every 3 s, re-subscribing each id) or
 * comes back after a night's outage finds its ids its own, while ids nobody resumes free their
 * Redis keys by themselves.
 */
const SUBSCRIPTION_OWNER_TTL_MS = 24 * 3_600_000;
/** How often the owner entries of the subscriptions live here are kept alive (and written again where missing), ms. */
const REFRESH_EVERY_MS = 60_000;
/** The bound on each Redis call: a silent Redis refuses a resume, never hangs it. */
const REDIS_TIMEOUT_MS = 1_000;

// Takes the id when it is free or already this identity's, and keeps it for ARGV[2] ms; 0: another's.
const CLAIM = `local cur = redis.call('get', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1`;
// Keeps each entry alive, and writes it again where it went missing (a claim that failed, a flushed Redis).
const REFRESH = `for i, k in ipairs(KEYS) do
  local cur = redis.call('get', k)
  if not cur or cur == ARGV[i + 1] then redis.call('set', k, ARGV[i + 1], 'PX', ARGV[1]) end
end return 0`;
const REFRESH_CHUNK = 500;

/** A subscription live on this gateway under an id, and how to end it when its owner resumes the id. */
interface Held {
  owner: string;
  evict: () => void;
}

/** Who may resume which STOMP subscription id (SubscriptionOwners on Redis, or a fake in tests). */
export interface SubscriptionIdOwners {
  /** Whether `owner` may take `id`: free or already its own (then it is its own for the TTL). Throws when the store cannot answer. */
  claim(id: string, owner: string): Promise<boolean>;
  /** The owner of the subscription live here under `id`, if one is. */
  liveOwner(id: string): string | undefined;
  /** A subscription under `id` runs here for `owner`; `evict` ends it (the id's owner resumed it elsewhere in this gateway). */
  hold(id: string, owner: string, evict: () => void): void;
  /** The subscription ended (only when `evict` is the one held). */
  drop(id: string, evict: () => void): void;
  /** Ends a stranger's subscription held here under `id` for `owner`'s resume. */
  evictStranger(id: string, owner: string): void;
}

/**
 * The owners of STOMP subscription ids, across gateways (docs/security.md, "Sessions"): the
 * identity that first subscribed under an id (its API key, else its address) is the only one that
 * may resume it, on any gateway, for SUBSCRIPTION_OWNER_TTL_MS after its subscription was last
 * live. One Redis key per id (`stompSubscriptionOwner`), kept alive while the subscription runs.
 */
export class SubscriptionOwners implements SubscriptionIdOwners {
  private readonly redis: Redis;
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly held = new Map<string, Held>();
  private timer?: NodeJS.Timeout;

  constructor(o: { redis: Redis; prefix: string }) {
    this.redis = o.redis;
    this.keys = redisKeys(o.prefix);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.refresh().catch(() => {}), REFRESH_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
    this.held.clear();
  }

  async claim(id: string, owner: string): Promise<boolean> {
    const r = await withTimeout(
      this.redis.eval(CLAIM, 1, this.keys.stompSubscriptionOwner(id), owner, SUBSCRIPTION_OWNER_TTL_MS),
      REDIS_TIMEOUT_MS,
    );
    if (r === TIMED_OUT) throw new Error("Redis did not answer in time (claim a STOMP subscription id)");
    return r === 1;
  }

  liveOwner(id: string): string | undefined {
    return this.held.get(id)?.owner;
  }

  hold(id: string, owner: string, evict: () => void): void {
    this.held.set(id, { owner, evict });
  }

  drop(id: string, evict: () => void): void {
    if (this.held.get(id)?.evict === evict) this.held.delete(id);
  }

  evictStranger(id: string, owner: string): void {
    const h = this.held.get(id);
    if (h && h.owner !== owner) {
      this.held.delete(id);
      h.evict();
    }
  }

  private async refresh(): Promise<void> {
    const held = [...this.held].map(([id, h]): [string, string] => [id, h.owner]);
    for (let i = 0; i < held.length; i += REFRESH_CHUNK) {
      const part = held.slice(i, i + REFRESH_CHUNK);
      const keys = part.map(([id]) => this.keys.stompSubscriptionOwner(id));
      await this.redis.eval(REFRESH, keys.length, ...keys, SUBSCRIPTION_OWNER_TTL_MS, ...part.map(([, o]) => o));
    }
  }
}
