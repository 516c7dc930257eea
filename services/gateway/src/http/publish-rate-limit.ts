import type { Redis } from "ioredis";
import { type Logger, redisKeys } from "@evb/domain";

/**
 * One token bucket per key in Redis, shared by every gateway: refilled at `rate` tokens per
 * second up to `burst`, one token per publish: a call of `n` publishes (a batch of n events)
 * takes n. It is let through once the bucket holds min(n, burst) tokens and then takes all n, so
 * that the bucket may go below zero: a batch larger than the burst waits for a full bucket and
 * leaves a debt the next publishes wait out, and over time every event counts at `rate`. Redis's
 * own clock (TIME) is used, so gateways need no synchronised clocks. Answers {1, 0} when the
 * tokens were taken, else {0, ms until enough are}.
 */
const TAKE_TOKEN = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
local need = math.min(n, burst)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1]) or burst
local ts = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local ok, wait = 0, 0
if tokens >= need then
  tokens = tokens - n
  ok = 1
else
  wait = math.ceil((need - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - math.min(tokens, 0)) * 1000 / rate) + 1000)
return {ok, wait}
`;

export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Per-key publish rate limits. A Redis failure lets the publish through (logged once per
 * outage): the limit protects capacity, and refusing every publish while Redis is away would
 * turn a cache outage into a publish outage.
 */
export class PublishRateLimiter {
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly logger: Logger;
  private failing = false;

  constructor(opts: { redis: Redis; prefix: string; logger: Logger }) {
    this.redis = opts.redis;
    this.prefix = opts.prefix;
    this.logger = opts.logger;
    this.redis.defineCommand("evbTakeToken", { numberOfKeys: 1, lua: TAKE_TOKEN });
  }

  /** Takes `n` tokens (a batch's events; default 1) from the key's bucket, or says how long until they are there. */
  async take(keyId: string, rate: number, burst: number, n = 1): Promise<RateDecision> {
    try {
      const take = (this.redis as unknown as { evbTakeToken(k: string, r: number, b: number, n: number): Promise<[number, number]> })
        .evbTakeToken;
      const [ok, wait] = await take.call(this.redis, redisKeys(this.prefix).publishRateLimit(keyId), rate, burst, n);
      if (this.failing) this.logger.info("publish rate limits apply again (Redis answers)");
      this.failing = false;
      return ok === 1 ? { ok: true } : { ok: false, retryAfterMs: wait };
    } catch (err) {
      if (!this.failing) this.logger.warn({ err }, "publish rate limits not applied: Redis failed");
      this.failing = true;
      return { ok: true };
    }
  }
}
