import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { chainNodeId } from "./chain-node-id.ts";
import { Heartbeat } from "./heartbeat.ts";
import { NodeRegistry } from "./node-registry.ts";
import { registryTimings } from "./registry-env.ts";

const timings = registryTimings({ NODE_HEARTBEAT_MS: 50, NODE_STALE_MS: 300, NODE_GONE_MS: 900 });

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// Crash survived: a node that stops beating (as after SIGKILL) turns inactive, then disappears;
// the rest pins the registry's records on a real Redis.
describe("NodeRegistry on a real Redis", () => {
  let redis: Redis;
  let prefix: string;
  let registry: NodeRegistry;
  beforeAll(() => {
    redis = new Redis(inject("redisUrl"));
  });
  afterAll(() => {
    redis.disconnect();
  });
  const fresh = () => {
    prefix = `t${randomBytes(4).toString("hex")}`;
    registry = new NodeRegistry({ redis, prefix });
  };

  it("a beating chain node is listed active with its stable node id, per group", async () => {
    fresh();
    await registry.beatChainNode("1", { sealerIndex: 3, address: "127.0.0.1:9001", blockNumber: 7 }, timings);
    await registry.beatChainNode("1", { sealerIndex: 1, address: "127.0.0.1:9002", blockNumber: 7 }, timings);
    const nodes = await registry.chainNodes("1");
    expect(nodes.map((n) => n.sealerIndex)).toEqual([1, 3]);
    expect(nodes[1]).toMatchObject({ nodeId: chainNodeId(3), address: "127.0.0.1:9001", blockNumber: 7, active: true });
    expect(chainNodeId(3)).toMatch(/^[0-9a-f]{128}$/);
    expect(await registry.chainNodes("2")).toEqual([]);
  });

  it("a node that stops beating turns inactive, then is forgotten and pruned from the index", async () => {
    fresh();
    await registry.beatChainNode("1", { sealerIndex: 0, address: "127.0.0.1:9001", blockNumber: null }, timings);
    await until(
      () => registry.chainNodes("1"),
      (n) => n.length === 1 && n[0]?.active === false,
      "inactive",
    );
    await until(
      () => registry.chainNodes("1"),
      (n) => n.length === 0,
      "gone",
    );
    expect(await redis.exists(`${prefix}:registry:chain:1:index`)).toBe(0);
  });

  it("a cleanly stopped broker node is inactive at once and listed until it expires", async () => {
    fresh();
    await registry.beatBrokerNode({ address: "127.0.0.1:8080", role: "gateway" }, timings);
    expect(await registry.brokerNodes()).toMatchObject([{ address: "127.0.0.1:8080", role: "gateway", active: true }]);
    await registry.brokerNodeStopped("127.0.0.1:8080");
    expect(await registry.brokerNodes()).toMatchObject([{ address: "127.0.0.1:8080", active: false }]);
  });

  it("Heartbeat keeps a node active past its stale limit and marks it stopped on close", async () => {
    fresh();
    const hb = new Heartbeat({
      name: "gw",
      intervalMs: timings.heartbeatMs,
      logger: silentLogger,
      beat: () => registry.beatBrokerNode({ address: "10.0.0.1:1", role: "gateway" }, timings),
      stopped: () => registry.brokerNodeStopped("10.0.0.1:1"),
    });
    await hb.start();
    const firstSeen = (await registry.brokerNodes())[0]?.lastSeenMs ?? 0;
    // Alive after several stale periods only because the beats keep coming.
    const later = await until(
      () => registry.brokerNodes(),
      (n) => (n[0]?.lastSeenMs ?? 0) > firstSeen + 3 * timings.staleMs,
      "beats",
    );
    expect(later[0]?.active).toBe(true);
    await hb.close();
    expect((await registry.brokerNodes())[0]?.active).toBe(false);
  });

  it("rejects timings that would make a live node flap", () => {
    expect(() => registryTimings({ NODE_HEARTBEAT_MS: 1000, NODE_STALE_MS: 1000, NODE_GONE_MS: 5000 })).toThrow(/NODE_STALE_MS/);
    expect(() => registryTimings({ NODE_HEARTBEAT_MS: 100, NODE_STALE_MS: 1000, NODE_GONE_MS: 1000 })).toThrow(/NODE_GONE_MS/);
  });
});
