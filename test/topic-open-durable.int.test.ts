import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeTopicRecord, type TopicRecord } from "@evb/domain";
import { ALL_VARIANTS, expectBrokerError, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { inSchema, readChainTopic, type Service, spawnService } from "./support/ledger-services.ts";
import { waitUntil } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

// Failures survived: the gateway cut off from Kafka while a topic is opened, then the ledger's
// schema dropped. `open` used to answer true once the row was in Postgres, so a lost ledger lost
// the topic. Now it answers true only once the topic's row is in the group's chain topic; cut
// off, it answers 200202, and every topic that was answered true comes back with the same row.
const KAFKA_CUT = join(import.meta.dirname, "support", "kafka-cut.ts");

/** Every topic record of group 1's chain topic, by topic name (the last one wins). */
function topicRecords(env: Record<string, string>): Promise<Map<string, TopicRecord>> {
  return readChainTopic(env, "1", decodeTopicRecord, (r) => r.name);
}

describe("an opened topic is durable in Kafka before open answers true", () => {
  let sys: TestSystem;
  let gateway: Service;
  const before = uniqueTopic("durable-before");
  const during = uniqueTopic("durable-during");
  const rows = () =>
    inSchema(
      sys.env,
      async (c) =>
        (await c.query('SELECT name, address, creator, created_at::float8 AS "createdAt" FROM topics ORDER BY ordinal')).rows as {
          name: string;
          address: string;
          creator: string;
          createdAt: number;
        }[],
    );

  beforeAll(async () => {
    sys = await TestSystem.start({});
    gateway = await spawnService(sys.env, "gateway-cut", "gateway", {
      NODE_OPTIONS: `--import ${KAFKA_CUT}`,
      PUBLISH_TIMEOUT_MS: "1500",
    });
  });
  afterAll(async () => {
    await gateway?.child.stop(5000);
    await sys?.stop();
  });

  it("answers 200202 while Kafka cannot take the topic's record, and true once it can", async () => {
    expect(expectSuccess(await rest(gateway.origin, "L", "open", { topic: before }), "L")).toBe(true);
    gateway.child.signal("SIGUSR2");
    try {
      for (const v of ALL_VARIANTS) expectBrokerError(await rest(gateway.origin, v, "open", { topic: during }), v, 200202);
    } finally {
      gateway.child.signal("SIGUSR2");
    }
    // The producer reconnects by itself; until then open keeps answering 200202, never a false true.
    await waitUntil("open answers true again", async () => {
      const r = await rest(gateway.origin, "L", "open", { topic: during });
      return (r.json as { code?: number }).code === 0;
    });
    const records = await topicRecords(sys.env);
    const opened = await rows();
    expect(opened.map((r) => r.name)).toEqual([before, during]);
    for (const { createdAt, ...row } of opened) {
      expect(records.get(row.name)).toEqual({ v: 1, kind: "topic", groupId: "1", ...row, createdAtMs: createdAt });
    }
  });

  it("every topic answered true comes back, unchanged, after the schema is dropped", async () => {
    const acknowledged = await rows();
    await sys.kill("indexer-1");
    await inSchema(sys.env, (c) => c.query(`DROP SCHEMA "${sys.env.DATABASE_SCHEMA}" CASCADE`));
    await sys.restart("indexer-1");
    expect(await rows()).toEqual(acknowledged);
    // The running gateway answers out of the rebuilt ledger once the indexer reports it matched it.
    await waitUntil("the gateway serves the rebuilt ledger", async () => (await fetch(`${sys.gatewayUrl}/readyz`)).status === 200, 60_000);
    for (const topic of [before, during]) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "exist", { topic }), "L")).toBe(true);
  });
});
