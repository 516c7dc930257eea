import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SubscriptionOwners } from "./subscription-owners.ts";

// Crash survived: none. The owners of STOMP subscription ids on real Redis, seen by two gateways.
describe("STOMP subscription id owners (Redis)", () => {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 1 });
  const other = redis.duplicate();
  const prefix = `so${randomBytes(4).toString("hex")}`;
  afterAll(async () => {
    other.disconnect();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("gives an id to the first identity, for every gateway, and kept for a day", async () => {
    const a = new SubscriptionOwners({ redis, prefix });
    const b = new SubscriptionOwners({ redis: other, prefix }); // another gateway
    expect(await a.claim("id-1", "key:k1")).toBe(true);
    expect(await b.claim("id-1", "key:k2")).toBe(false);
    expect(await b.claim("id-1", "10.0.0.2")).toBe(false);
    expect(await b.claim("id-1", "key:k1")).toBe(true);
    const ttl = await redis.pttl(`${prefix}:stomp:owner:id-1`);
    expect(ttl).toBeGreaterThan(23 * 3_600_000);
    expect(await redis.get(`${prefix}:stomp:owner:id-1`)).toBe("key:k1");
  });

  it("ends a stranger's subscription held here only for the owner's resume", () => {
    const a = new SubscriptionOwners({ redis, prefix });
    const ended: string[] = [];
    a.hold("id-2", "key:k2", () => ended.push("k2"));
    a.evictStranger("id-2", "key:k2");
    expect(ended).toEqual([]);
    a.evictStranger("id-2", "key:k1");
    expect([ended, a.liveOwner("id-2")]).toEqual([["k2"], undefined]);
  });
});
