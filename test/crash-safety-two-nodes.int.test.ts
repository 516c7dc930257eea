import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { expectEveryPublishLandedOnce } from "./support/landed-check.ts";
import { type PublishOutcome, publishStream } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

const COUNT = 300;

// Crash survived: SIGKILL of one of two indexers mid-stream while publishes arrive through two
// gateways. The survivor takes over the dead one's partitions after the rebalance (and may be
// handed batches the dead one had sealed but not committed in Kafka); the dead one then comes
// back and the partitions are split again, all while receipts must reach the right gateway.
describe("crash safety: two gateways, two indexers", () => {
  let sys: TestSystem;
  let topics: string[];
  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 2, indexers: 2, env: { PUBLISH_TIMEOUT_MS: "3000" } });
    // More topics than partitions, so that both indexers own some of the traffic.
    topics = Array.from({ length: 6 }, (_, i) => uniqueTopic(`duo${i}`));
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("every acknowledged publish survives SIGKILL of one indexer, exactly once, whichever gateway took it", async () => {
    expect(sys.gatewayUrls).toHaveLength(2);
    let crash: Promise<void> = Promise.resolve();
    let restarted: Promise<void> | undefined;
    let killedAt = 0;
    const outcomes: PublishOutcome[] = await publishStream({
      gateways: sys.gatewayUrls,
      topics,
      count: COUNT,
      concurrency: 12,
      content: (i) => `duo-${i}-事件`,
      onOutcome: (_o, completed) => {
        if (completed === 80) {
          killedAt = completed;
          crash = sys.kill("indexer-1");
        }
        if (completed === 220) restarted = crash.then(() => sys.restart("indexer-1"));
      },
    });
    await (restarted ?? crash.then(() => sys.restart("indexer-1")));
    expect(killedAt).toBe(80);
    for (const gw of sys.gatewayUrls) expect(outcomes.filter((o) => o.gateway === gw && o.status === "SUCCESS").length).toBeGreaterThan(0);
    const report = await expectEveryPublishLandedOnce(sys, outcomes);
    expect(report.events).toHaveLength(COUNT);
  });

  it("after the restart, publishes to every topic through either gateway succeed", async () => {
    const replies = await Promise.all(
      topics.map((topic, i) => rest(sys.gatewayUrls[i % 2] as string, "M", "publish", { topic, content: "after" }, "POST")),
    );
    for (const r of replies) expect(r.json).toMatchObject({ status: "SUCCESS" });
  });
});
