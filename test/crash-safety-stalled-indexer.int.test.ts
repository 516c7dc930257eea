import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { expectEveryPublishLandedOnce } from "./support/landed-check.ts";
import { inSchema, type Service, spawnService } from "./support/ledger-services.ts";
import { type PublishOutcome, publishThroughOutage, waitUntil } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

// Failures survived: (1) a seal held for 15 s by another connection holding the group's chain
// head row lock (longer than DATABASE_QUERY_TIMEOUT_MS and than the old 10 s Kafka session);
// (2) the indexer process paused with SIGSTOP for 30 s (longer than its Kafka session, so it is
// fenced out of its consumer group). The indexer used to be fenced and exit; now it heartbeats
// while sealing and re-joins in-process: indexing resumes without a restart, and every SUCCESS
// and TIMEOUT publish is in the ledger exactly once.
describe("a stalled indexer", () => {
  let sys: TestSystem;
  let indexer: Service;
  let topics: string[];
  const outcomes: PublishOutcome[] = [];
  const health = async () => (await fetch(indexer.healthUrl)).json() as Promise<{ ok: boolean; reason?: string; consumerRestarts: number }>;

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { PUBLISH_TIMEOUT_MS: "3000" } });
    await sys.kill("indexer-1");
    // Our own indexer process, to pause and watch (same environment and sealer).
    indexer = await spawnService(sys.env, "indexer-stalled", "indexer", { SEALER_INDEX: "0" });
    topics = Array.from({ length: 3 }, (_, i) => uniqueTopic(`stall${i}`));
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    await indexer?.child.stop(5000);
    await sys?.stop();
  });

  const stream = (label: string, outage: () => Promise<void>) =>
    publishThroughOutage({
      gateways: [sys.gatewayUrl],
      topics,
      count: 120,
      concurrency: 4,
      content: (i) => `${label}-${i}`,
      at: 20,
      outage,
    });

  it("a seal held 15 s by a row lock: indexing resumes in the same process", async () => {
    const pid = indexer.child.pid;
    const got = await stream("locked", () =>
      inSchema(sys.env, async (c) => {
        await c.query("BEGIN");
        await c.query("SELECT 1 FROM chain_heads WHERE group_id = '1' FOR UPDATE");
        await new Promise((r) => setTimeout(r, 15_000));
        await c.query("ROLLBACK");
      }),
    );
    outcomes.push(...got);
    expect(got.filter((o) => o.status === "TIMEOUT").length).toBeGreaterThan(0);
    expect(indexer.child.running).toBe(true);
    expect(indexer.child.pid).toBe(pid);
    await expectEveryPublishLandedOnce(sys, outcomes);
  });

  it("an indexer paused 30 s (fenced out of its group) re-joins and indexes again", async () => {
    const pid = indexer.child.pid;
    const got = await stream("paused", async () => {
      indexer.child.signal("SIGSTOP");
      await new Promise((r) => setTimeout(r, 30_000));
      indexer.child.signal("SIGCONT");
    });
    outcomes.push(...got);
    expect(got.filter((o) => o.status === "TIMEOUT").length).toBeGreaterThan(0);
    await expectEveryPublishLandedOnce(sys, outcomes);
    expect(indexer.child.running).toBe(true);
    expect(indexer.child.pid).toBe(pid);
    // And new publishes are confirmed again by this same process.
    await waitUntil("the indexer reports ready", async () => (await health()).ok);
    const after = await rest(sys.gatewayUrl, "L", "publish", { topic: topics[0] as string, content: "after-pause" }, "POST");
    expect((after.json as { status: string }).status, after.text).toBe("SUCCESS");
  });
});
