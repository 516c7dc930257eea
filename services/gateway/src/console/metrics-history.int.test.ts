import { randomBytes } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { Redis } from "ioredis";
import { silentLogger } from "@evb/domain";
import { afterAll, describe, expect, inject, it } from "vitest";
import { HistorySampler, RedisHistory } from "./metrics-history.ts";
import { metricsHistoryOperation } from "./metrics-history-operation.ts";

const INTERVAL = 400;

// Two gateways of one deployment sample into the real Redis: one series, one sample per slot,
// with both gateways' publishes; a Redis that never answers costs the samples, never a hang.
describe("console history in Redis", () => {
  const redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 1 });
  const prefix = `hist${randomBytes(4).toString("hex")}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it("two gateways' samplers write one series: one sample per slot, every gateway's publishes summed, the ledger's figures as read", async () => {
    const answered = [0, 0];
    let sealed = 0;
    const gateway = (i: number) =>
      new HistorySampler({
        port: new RedisHistory(i === 0 ? redis : redis.duplicate(), prefix),
        groups: ["1", "2"],
        intervalMs: INTERVAL,
        answered: (g) => (g === "1" ? (answered[i] ?? 0) : 0),
        figures: async (g) => ({ sealed: g === "1" ? sealed : 0, delivered: 0 }),
        now: Date.now,
        logger: silentLogger,
      });
    const samplers = [gateway(0), gateway(1)];
    const started = Date.now();
    for (const s of samplers) s.start();
    const history = new RedisHistory(redis, prefix);
    let publishedUpTo = started;
    for (let round = 0; round < 8; round++) {
      answered[0] = (answered[0] ?? 0) + 2;
      answered[1] = (answered[1] ?? 0) + 3;
      sealed += 5;
      publishedUpTo = Date.now();
      await new Promise((r) => setTimeout(r, INTERVAL / 2));
    }
    // Every publish counted lands in a sample taken after it (the next slot at the latest).
    await expect
      .poll(async () => (await history.read("1", started)).filter((s) => s.at > publishedUpTo + INTERVAL).length, { timeout: 5_000 })
      .toBeGreaterThan(0);
    for (const s of samplers) await s.close();

    const samples = await history.read("1", 0);
    expect(samples.length).toBeGreaterThanOrEqual(4);
    const slots = samples.map((s) => Math.floor(s.at / INTERVAL));
    expect(new Set(slots).size, "one sample per slot").toBe(samples.length);
    for (const [i, cur] of samples.entries()) {
      const prev = samples[i - 1];
      if (!prev) continue;
      expect(cur.at).toBeGreaterThan(prev.at);
      expect(cur.publishes).toBeGreaterThanOrEqual(prev.publishes);
      expect(cur.sealed).toBeGreaterThanOrEqual(prev.sealed);
    }
    expect(samples.at(-1)).toMatchObject({ publishes: 40, sealed: 40, delivered: 0 });
    // Each group has its own series.
    expect((await history.read("2", 0)).every((s) => s.publishes === 0 && s.sealed === 0)).toBe(true);
    const ttl = await redis.pttl(`${prefix}:console-history:samples:1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3_600_000);

    // What admin/metricsHistory answers: the samples since a time, with the gateway's clock.
    const op = metricsHistoryOperation({ port: history, groups: new Set(["1", "2"]), intervalMs: INTERVAL, now: Date.now });
    const since = samples[2]?.at as number;
    const params = { optional: (n: string) => (n === "since" ? String(since) : undefined), variant: "M" };
    const reply = (await op.handle({ params } as never)) as { kind: "data"; data: { available: boolean; samples: unknown[] } };
    expect(reply.data.available).toBe(true);
    expect(reply.data.samples).toEqual(samples.slice(2));
  });

  it("a Redis that never answers skips the samples in bounded time, and the read answers `available: false`", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    const hung = new Redis({ host: "127.0.0.1", port, maxRetriesPerRequest: 1, enableReadyCheck: false });
    hung.on("error", () => {});
    try {
      const history = new RedisHistory(hung, prefix);
      const sampler = new HistorySampler({
        port: history,
        groups: ["1"],
        intervalMs: INTERVAL,
        answered: () => 1,
        figures: async () => ({ sealed: 1, delivered: 1 }),
        now: Date.now,
        logger: silentLogger,
      });
      const t0 = Date.now();
      await sampler.tick();
      expect(Date.now() - t0).toBeLessThan(2_500);
      const op = metricsHistoryOperation({ port: history, groups: new Set(["1"]), intervalMs: INTERVAL, now: Date.now });
      const params = { optional: () => undefined, variant: "M" };
      const reply = (await op.handle({ params } as never)) as { data: unknown };
      expect(reply.data).toMatchObject({ available: false, samples: [] });
    } finally {
      hung.disconnect();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});
