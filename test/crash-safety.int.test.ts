import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { expectEveryPublishLandedOnce } from "./support/landed-check.ts";
import { verifyLedger } from "./support/ledger-integrity.ts";
import { type PublishOutcome, publishStream, waitUntil } from "./support/publish-stream.ts";
import { blockHashes, inSchema, readChainRecords } from "./support/ledger-services.ts";
import { replayWholeLog } from "./support/replay-indexer.ts";
import { TestSystem } from "./support/system.ts";

const COUNT = 300;

// Crash survived: SIGKILL of the only indexer at an arbitrary point of a stream of concurrent
// publishes — mid-batch before the ledger commit, between the ledger commit and the Kafka offset
// commit (the batch is redelivered), or between the commit and the receipts (publishers see
// TIMEOUT) — twice in one stream; and a redelivery of the whole log to a second consumer group.
describe("crash safety: one gateway, one indexer", () => {
  let sys: TestSystem;
  let topics: string[];
  beforeAll(async () => {
    // A short publish timeout so that publishes waiting out the crash answer TIMEOUT.
    sys = await TestSystem.start({ gateways: 1, indexers: 1, env: { PUBLISH_TIMEOUT_MS: "3000" } });
    topics = Array.from({ length: 4 }, (_, i) => uniqueTopic(`crash${i}`));
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  let outcomes: PublishOutcome[];

  it("every acknowledged publish survives SIGKILLs of the indexer mid-stream, exactly once", async () => {
    let crashes: Promise<void> = Promise.resolve();
    let completedSoFar = 0;
    /** How many publishes had completed when each SIGKILL was actually sent. */
    const killedAt: number[] = [];
    outcomes = await publishStream({
      gateways: [sys.gatewayUrl],
      topics,
      count: COUNT,
      concurrency: 12,
      content: (i) => `crash-${i}-事件`,
      onOutcome: (_o, completed) => {
        completedSoFar = completed;
        if (completed === 60 || completed === 180) {
          crashes = crashes.then(async () => {
            killedAt.push(completedSoFar);
            await sys.kill("indexer-1");
            await sys.restart("indexer-1");
          });
        }
      },
    });
    await crashes;
    // Both kills hit while publishes were still in flight.
    expect(killedAt).toHaveLength(2);
    for (const at of killedAt) expect(at).toBeLessThan(COUNT - 12);
    const report = await expectEveryPublishLandedOnce(sys, outcomes);
    expect(report.events).toHaveLength(COUNT);
    expect(outcomes.filter((o) => o.status === "SUCCESS").length).toBeGreaterThan(0);
  });

  it("a publish answered before another began has the smaller sequence number", async () => {
    // Answered (SUCCESS or TIMEOUT) means Kafka holds the record, so a later publish to the same
    // topic lands behind it on the same partition, crash or not.
    const report = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    const seqOf = new Map(report.events.map((e) => [e.content, e.seq]));
    const inversions: string[] = [];
    for (const a of outcomes) {
      for (const b of outcomes) {
        if (a.topic === b.topic && a.completed < b.started && (seqOf.get(a.content) as number) > (seqOf.get(b.content) as number)) {
          inversions.push(`${a.i} before ${b.i}`);
        }
      }
    }
    expect(inversions).toEqual([]);
  });

  it("redelivering the whole log to another consumer group adds nothing", async () => {
    const before = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    const { sealedBlocks, records } = await replayWholeLog(sys);
    expect(records).toBeGreaterThanOrEqual(COUNT);
    expect(sealedBlocks).toBe(0);
    const after = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(after.problems).toEqual([]);
    expect(after.height).toBe(before.height);
    expect(after.events).toEqual(before.events);
  });

  it("the restarted indexer keeps sealing: a new publish succeeds with the next sequence number", async () => {
    const topic = topics[0] as string;
    const before = expectSuccess(await rest(sys.gatewayUrl, "L", "state", { topic }), "L") as { sequenceNumber: number };
    const r = await rest(sys.gatewayUrl, "L", "publish", { topic, content: "after the crashes" }, "POST");
    expect(r.json).toMatchObject({ status: "SUCCESS", eventId: expect.stringMatching(new RegExp(`-${before.sequenceNumber + 1}-\\d+$`)) });
  });

  it("every block has its chain record in Kafka, also those sealed just before a SIGKILL", async () => {
    // A kill between a block's commit and its chain record's write leaves the block marked
    // unwritten; the restarted indexer writes the record from the ledger.
    await waitUntil("no block lacks its chain record", async () =>
      inSchema(sys.env, async (c) => (await c.query("SELECT count(*)::int AS n FROM blocks WHERE NOT chain_written")).rows[0].n === 0),
    );
    const blocks = await blockHashes(sys.env);
    const chain = await readChainRecords(sys.env);
    expect([...chain].map(([h, r]) => [h, r.hash])).toEqual([...blocks]);
  });
});
