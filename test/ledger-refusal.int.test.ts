import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logTopicName, silentLogger } from "@evb/domain";
import { createKafka, topicOffsets } from "@evb/eventlog";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { blockHashes, inSchema, type Service, spawnService } from "./support/ledger-services.ts";
import { type PublishOutcome, publishStream } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

// Failures survived: (1) retention deleted log records before the indexer indexed them (the
// indexer was down; Kafka's retention removed the records it had not reached); (2) then the
// ledger itself is lost (schema dropped) next to that log. Indexing on would skip records in
// silence or hand out acknowledged eventIds again for other events. The indexer refuses the
// log instead: an ERROR line naming the group, partitions and offsets, /health 503 with the
// reason, and nothing sealed, so nothing acknowledged is renamed.
describe("a log that no longer holds what the ledger lacks", () => {
  let sys: TestSystem;
  let topics: string[];
  let acked: PublishOutcome[];
  let refusing: Service | undefined;

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { PUBLISH_TIMEOUT_MS: "1500" } });
    topics = [uniqueTopic("gone-a"), uniqueTopic("gone-b"), uniqueTopic("gone-c")];
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    await refusing?.child.stop(5000);
    await sys?.stop();
  });

  const health = async (s: Service) => {
    const r = await fetch(s.healthUrl);
    return { status: r.status, body: (await r.json()) as { ok: boolean; reason?: string; sealedBlocks: number } };
  };
  const logOf = (name: string) =>
    readFileSync(join(import.meta.dirname, "..", ".cache", "test-logs", `${sys.env.REDIS_PREFIX}-${name}.log`), "utf8");

  it("retention removed records never indexed: the indexer refuses and says why", async () => {
    const all = await publishStream({ gateways: [sys.gatewayUrl], topics, count: 30, concurrency: 3, content: (i) => `kept-${i}` });
    acked = all.filter((o) => o.status === "SUCCESS");
    expect(acked).toHaveLength(30);
    const before = await blockHashes(sys.env);

    await sys.kill("indexer-1");
    const unindexed = await publishStream({ gateways: [sys.gatewayUrl], topics, count: 9, concurrency: 3, content: (i) => `lost-${i}` });
    expect(unindexed.map((o) => o.status)).toEqual(Array(9).fill("TIMEOUT"));
    const kafka = createKafka({ brokers: (sys.env.KAFKA_BROKERS as string).split(","), clientId: "test-retention", logger: silentLogger });
    const admin = kafka.admin();
    try {
      const topic = logTopicName(sys.env.KAFKA_TOPIC_PREFIX as string, "1");
      const ends = await topicOffsets(admin, topic);
      await admin.deleteRecords({
        topics: [{ name: topic, partitions: ends.map((e) => ({ partition: e.partition, offset: BigInt(e.high) })) }],
      });
    } finally {
      await admin.close();
    }

    refusing = await spawnService(sys.env, "indexer-refusing", "indexer", { SEALER_INDEX: "0" }, false);
    const h = await health(refusing);
    expect(h.status).toBe(503);
    expect(h.body.ok).toBe(false);
    expect(h.body.reason).toMatch(/group 1: refusing log .*retention.*partition \d+: ledger \d+, log \d+\.\.\d+/);
    // Alive all the same: a restart would not help, so no supervisor should restart it.
    expect((await fetch(refusing.healthUrl.replace(/\/health$/, "/livez"))).status).toBe(200);
    expect(logOf("indexer-refusing")).toMatch(/"level":50.*"refusal":"retention"/);
    // Nothing sealed: the blocks are the ones acknowledged, and their eventIds name the same events.
    expect(await blockHashes(sys.env)).toEqual(before);
    for (const o of acked) {
      const data = expectSuccess(await rest(sys.gatewayUrl, "L", "getEvent", { eventId: o.eventId as string }), "L") as { content: string };
      expect(Buffer.from(data.content, "base64").toString("utf8")).toBe(o.content);
    }
    await refusing.child.stop(5000);
  });

  it("the ledger dropped next to that log: refused, since it cannot be rebuilt and indexing would reuse its eventIds", async () => {
    await inSchema(sys.env, (c) => c.query(`DROP SCHEMA "${sys.env.DATABASE_SCHEMA}" CASCADE`));
    refusing = await spawnService(sys.env, "indexer-dropped", "indexer", { SEALER_INDEX: "0" }, false);
    const h = await health(refusing);
    expect(h.status).toBe(503);
    // The chain records name the lost blocks, but the log no longer holds their records.
    expect(h.body.reason).toMatch(/group 1: cannot rebuild blocks 1\.\.\d+ from the chain records: the log no longer holds partition/);
    expect(logOf("indexer-dropped")).toMatch(/"level":50.*cannot rebuild blocks/);
    expect((await blockHashes(sys.env)).size).toBe(0);
  });
});
