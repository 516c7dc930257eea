import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { expectEveryPublishLandedOnce } from "./support/landed-check.ts";
import { publishThroughOutage } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";
import { TcpRelay } from "./support/tcp-relay.ts";

const COUNT = 200;

// Crash survived: the indexer loses Postgres in the middle of a publish stream (every
// connection cut, new ones refused, then the database hangs without answering) and gets it
// back. Seals fail or stall, nothing is committed to Kafka past the ledger, and once Postgres
// answers again every acknowledged (SUCCESS) and TIMEOUT publish is in the ledger exactly once.
describe("the indexer loses Postgres mid-stream", () => {
  let sys: TestSystem;
  let relay: TcpRelay;
  let topics: string[];
  beforeAll(async () => {
    relay = TcpRelay.for(inject("databaseUrl"), 5432);
    await relay.start();
    sys = await TestSystem.start({
      indexerEnv: { DATABASE_URL: relay.via(inject("databaseUrl")) },
      env: { PUBLISH_TIMEOUT_MS: "3000" },
    });
    topics = Array.from({ length: 3 }, (_, i) => uniqueTopic(`pgout${i}`));
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    relay?.up();
    await sys?.stop();
    relay?.close();
  });

  it("loses no acknowledged publish and indexes nothing twice", async () => {
    const outcomes = await publishThroughOutage({
      gateways: [sys.gatewayUrl],
      topics,
      count: COUNT,
      concurrency: 8,
      content: (i) => `pg-outage-${i}`,
      at: 50,
      outage: () => relay.outage(["down", "stall"], 2500),
    });
    // The outage really hit the stream: some publishes could not be confirmed in time.
    expect(outcomes.filter((o) => o.status === "TIMEOUT").length).toBeGreaterThan(0);
    await expectEveryPublishLandedOnce(sys, outcomes);
  });
});
