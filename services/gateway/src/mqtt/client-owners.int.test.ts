import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, inject, it } from "vitest";
import { entryGateway, entryIdentity, ownerEntry, RedisClientOwners } from "./client-owners.ts";

// Crash survived: none. The MQTT client id owner entries on real Redis, as two gateways write them.
describe("MQTT client id owners (Redis)", () => {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 1 });
  const other = redis.duplicate();
  const prefix = `co${randomBytes(4).toString("hex")}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    other.disconnect();
  });

  it("a swap for another identity changes nothing; the same identity's swap returns the entry it replaced", async () => {
    const a = new RedisClientOwners({ redis, subscriber: redis, prefix });
    const b = new RedisClientOwners({ redis: other, subscriber: other, prefix }); // another gateway
    const first = ownerEntry("gw-a/t1", "key:k1");
    expect(await a.swap("c1", first, "key:k1")).toEqual({ previous: null });
    expect(await b.swap("c1", ownerEntry("gw-b/t2", "key:k2"), "key:k2")).toBe("foreign");
    expect(await b.swap("c1", ownerEntry("gw-b/t3", "127.0.0.2"), "127.0.0.2")).toBe("foreign");
    expect(await redis.get(`${prefix}:mqtt:owner:c1`)).toBe(first);
    const next = ownerEntry("gw-b/t4", "key:k1");
    expect(await b.swap("c1", next, "key:k1")).toEqual({ previous: first });
    expect([entryGateway(first), entryIdentity(next)]).toEqual(["gw-a", "key:k1"]);
  });

  it("an entry written before identities were kept (`<gatewayId>/<token>`) is anybody's", async () => {
    const a = new RedisClientOwners({ redis, subscriber: redis, prefix });
    await redis.set(`${prefix}:mqtt:owner:c2`, "gw-old/t0");
    expect(await a.swap("c2", ownerEntry("gw-a/t5", "key:k9"), "key:k9")).toEqual({ previous: "gw-old/t0" });
    expect([entryGateway("gw-old/t0"), entryIdentity("gw-old/t0")]).toEqual(["gw-old", null]);
  });
});
