import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { PublishRateLimiter } from "./publish-rate-limit.ts";

const logs: string[] = [];
const logger = {
  debug() {},
  info(_o: object | string, m?: string) {
    logs.push(`info ${m}`);
  },
  warn(_o: object | string, m?: string) {
    logs.push(`warn ${m}`);
  },
  error() {},
};

// Crash survived: Redis unreachable (the limiter lets publishes through and says so once).
describe("publish rate limit (token bucket in Redis)", () => {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 1 });
  const prefix = `rl${randomBytes(4).toString("hex")}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("allows the burst, refuses past it with the wait until the next token, and refills over time", async () => {
    const a = new PublishRateLimiter({ redis, prefix, logger });
    const b = new PublishRateLimiter({ redis: redis.duplicate(), prefix, logger }); // another gateway
    expect(await a.take("k1", 1, 3)).toEqual({ ok: true });
    expect(await b.take("k1", 1, 3)).toEqual({ ok: true });
    expect(await a.take("k1", 1, 3)).toEqual({ ok: true });
    const over = await b.take("k1", 1, 3);
    expect(over.ok).toBe(false);
    if (!over.ok) expect(over.retryAfterMs).toBeGreaterThan(0);
    // Another key has its own bucket.
    expect(await a.take("k2", 1, 3)).toEqual({ ok: true });
    // One token a second (slow enough that a loaded machine cannot refill the bucket between the
    // four takes above): one comes back within about a second.
    await expect.poll(async () => (await a.take("k1", 1, 3)).ok, { timeout: 5000, interval: 20 }).toBe(true);
  });

  it("lets publishes through while Redis fails, logging it once", async () => {
    const dead = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    dead.on("error", () => {});
    const limiter = new PublishRateLimiter({ redis: dead, prefix, logger });
    logs.length = 0;
    expect(await limiter.take("k", 1, 1)).toEqual({ ok: true });
    expect(await limiter.take("k", 1, 1)).toEqual({ ok: true });
    expect(logs.filter((l) => l.startsWith("warn"))).toHaveLength(1);
    dead.disconnect();
  });
});
