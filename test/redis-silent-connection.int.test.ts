import { silentLogger } from "@evb/domain";
import type { SharedConfig } from "@evb/config";
import { openRedis } from "@evb/runtime";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TcpRelay } from "./support/tcp-relay.ts";

// Fault survived: Redis's host vanishes without RST or FIN, and when it is back the bytes the
// old connection sent are never answered (a real link's retransmissions come back ever later;
// here, never). A command or subscriber connection notices the silence and connects again, so
// it works once Redis is reachable; the old code kept writing to the dead socket for good.
describe("a Redis connection whose peer went silent", () => {
  let relay: TcpRelay;
  const opened: Redis[] = [];
  const open = (use: "commands" | "subscriber") => {
    const r = openRedis({ REDIS_URL: relay.via(inject("redisUrl")) } as SharedConfig, silentLogger, use);
    opened.push(r);
    return r;
  };
  beforeAll(async () => {
    relay = TcpRelay.for(inject("redisUrl"), 6379);
    await relay.start();
  });
  afterAll(async () => {
    for (const r of opened) r.disconnect();
    relay.close();
  });

  async function answersAgain(probe: () => Promise<unknown>): Promise<boolean> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (
        await probe().then(
          () => true,
          () => false,
        )
      )
        return true;
      await new Promise((r) => setTimeout(r, 200));
    }
    return false;
  }

  it("a command connection is replaced and answers again", async () => {
    const redis = open("commands");
    const key = `evb-test:silent:${process.pid}`;
    await redis.set(key, "before");
    relay.silenceOpenConnections();
    await expect(redis.get(key)).rejects.toThrow(/timed out/i);
    expect(await answersAgain(() => redis.set(key, "after"))).toBe(true);
    expect(await redis.get(key)).toBe("after");
    await redis.del(key);
  });

  it("a subscriber connection is replaced and hears messages again", async () => {
    const sub = open("subscriber");
    const pub = open("commands");
    const channel = `evb-test:silent-channel:${process.pid}`;
    const heard: string[] = [];
    sub.on("message", (_c: string, m: string) => heard.push(m));
    await sub.subscribe(channel);
    await pub.publish(channel, "one");
    expect(await answersAgain(async () => expect(heard).toContain("one"))).toBe(true);
    relay.silenceOpenConnections();
    let n = 0;
    const got = await answersAgain(async () => {
      await pub.publish(channel, `again-${++n}`);
      await new Promise((r) => setTimeout(r, 100));
      expect(heard.some((m) => m.startsWith("again-"))).toBe(true);
    });
    expect(got).toBe(true);
  });
});
