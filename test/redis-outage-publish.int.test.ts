import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { expectJson200, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { expectEveryPublishLandedOnce } from "./support/landed-check.ts";
import { publishThroughOutage } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";
import { TcpRelay } from "./support/tcp-relay.ts";

const COUNT = 200;

// Crash survived: Redis (receipts, counters, registry) hangs and then refuses connections for
// every service in the middle of a publish stream, and comes back. Receipts are lost, so some
// publishes answer TIMEOUT, but the indexer keeps indexing (Redis is only a hint on its path):
// every SUCCESS and TIMEOUT publish is in the ledger exactly once with a valid chain, and once
// Redis is back publishes are answered SUCCESS again, without restarting anything.
describe("Redis outage under a publish stream", () => {
  let sys: TestSystem;
  let relay: TcpRelay;
  let topics: string[];
  beforeAll(async () => {
    relay = TcpRelay.for(inject("redisUrl"), 6379);
    await relay.start();
    sys = await TestSystem.start({ env: { REDIS_URL: relay.via(inject("redisUrl")), PUBLISH_TIMEOUT_MS: "3000" } });
    topics = Array.from({ length: 3 }, (_, i) => uniqueTopic(`rdout${i}`));
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    relay?.up();
    await sys?.stop();
    relay?.close();
  });

  it("loses no answered publish, indexes nothing twice, and answers SUCCESS again afterwards", async () => {
    const outcomes = await publishThroughOutage({
      gateways: [sys.gatewayUrl],
      topics,
      count: COUNT,
      concurrency: 8,
      content: (i) => `redis-outage-${i}`,
      at: 40,
      outage: () => relay.outage(["stall", "down"], 2500),
    });
    // The outage really hit the stream: receipts were lost.
    expect(outcomes.filter((o) => o.status === "TIMEOUT").length).toBeGreaterThan(0);
    await expectEveryPublishLandedOnce(sys, outcomes);

    // Receipts flow again once the subscriber connection is back.
    await expect
      .poll(
        async () => {
          const r = expectJson200(await rest(sys.gatewayUrl, "L", "publish", { topic: topics[0] as string, content: "after" }, "POST"));
          return (r as { status: string }).status;
        },
        { timeout: 30_000, interval: 500 },
      )
      .toBe("SUCCESS");
  });
});
