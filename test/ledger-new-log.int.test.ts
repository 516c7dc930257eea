import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleProgress, KafkaCluster } from "@evb/devstack";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { verifyLedger } from "./support/ledger-integrity.ts";
import { blockHashes, inSchema, type Service, spawnService } from "./support/ledger-services.ts";
import { type PublishOutcome, publishStream } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

// Failure survived: the Kafka log is replaced under an existing ledger — a second checkout or a
// deleted .cache starts a fresh Kafka cluster next to the machine's Postgres ledger — and later
// the first log comes back. The ledger's positions belong to the first log; read against the
// new one they used to make the indexer skip every record (every publish TIMEOUT, nothing
// indexed, health ok). Each log is now an epoch of the ledger: publishes answer SUCCESS on the
// new log, heights and sequence numbers continue, and nothing acknowledged is renamed.
describe("a fresh Kafka log under an existing ledger", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-newlog-"));
  const fresh = new KafkaCluster({
    dir,
    brokers: 1,
    basePort: 27000 + Math.floor(Math.random() * 800),
    fresh: true,
    // 384m: at 256m the broker sometimes died at start allocating its log cleaner's buffers (CI, 2026-11-26).
    heap: "384m",
    progress: consoleProgress,
  });
  let sys: TestSystem;
  let topics: string[];
  const running: Service[] = [];
  const acked: PublishOutcome[] = [];

  const publish = async (gateway: string, count: number, label: string) => {
    const outcomes = await publishStream({ gateways: [gateway], topics, count, concurrency: 4, content: (i) => `${label}-${i}` });
    expect(outcomes.filter((o) => o.status !== "SUCCESS").map((o) => o.status)).toEqual([]);
    acked.push(...outcomes);
  };
  /** Every acknowledged eventId still names the content its publisher was given it for. */
  const expectNothingRenamed = async (gateway: string) => {
    for (const o of acked) {
      const r = await rest(gateway, "L", "getEvent", { eventId: o.eventId as string });
      const data = expectSuccess(r, "L") as { topic: string; content: string };
      expect({ id: o.eventId, topic: data.topic, content: Buffer.from(data.content, "base64").toString("utf8") }).toEqual({
        id: o.eventId,
        topic: o.topic,
        content: o.content,
      });
    }
  };
  const stopRunning = async () => {
    for (const s of running.splice(0)) await s.child.stop(5000);
  };

  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 1, indexers: 1 });
    topics = [uniqueTopic("newlog-a"), uniqueTopic("newlog-b")];
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    await stopRunning();
    await sys?.stop();
    await fresh.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("publishes on a new log answer SUCCESS and land; earlier blocks and eventIds are unchanged", async () => {
    await publish(sys.gatewayUrl, 40, "first-log");
    const before = await blockHashes(sys.env);
    await sys.kill("gateway-1");
    await sys.kill("indexer-1");

    const brokers = (await fresh.start()).join(",");
    running.push(await spawnService(sys.env, "indexer-newlog", "indexer", { KAFKA_BROKERS: brokers }));
    const gateway = await spawnService(sys.env, "gateway-newlog", "gateway", { KAFKA_BROKERS: brokers });
    running.push(gateway);
    await publish(gateway.origin, 40, "second-log");

    const after = await blockHashes(sys.env);
    for (const [height, hash] of before) expect(after.get(height), `block ${height}`).toBe(hash);
    expect(after.size).toBeGreaterThan(before.size);
    const report = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(report.problems).toEqual([]);
    expect(new Set(report.events.map((e) => e.epoch)).size).toBe(2);
    await expectNothingRenamed(gateway.origin);
    const epochs = await inSchema(sys.env, (c) => c.query("SELECT epoch, base_height::int AS base_height FROM log_epochs ORDER BY epoch"));
    expect(epochs.rows).toEqual([
      { epoch: 1, base_height: 0 },
      { epoch: 2, base_height: before.size },
    ]);
  });

  it("the first log, back again, continues its own epoch", async () => {
    await stopRunning();
    running.push(await spawnService(sys.env, "indexer-back", "indexer"));
    const gateway = await spawnService(sys.env, "gateway-back", "gateway");
    running.push(gateway);
    await publish(gateway.origin, 20, "first-log-again");
    const report = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(report.problems).toEqual([]);
    expect(report.events).toHaveLength(acked.length);
    expect(report.events.slice(-20).every((e) => e.epoch === 1)).toBe(true);
    await expectNothingRenamed(gateway.origin);
  });
});
