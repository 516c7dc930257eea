import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type OffsetGap, silentLogger } from "@evb/domain";
import { LedgerFenceError } from "@evb/storage";
import { BatchPipeline } from "./batch-pipeline.ts";
import { IndexerState } from "./indexer-state.ts";
import type { FetchedBatch } from "./ports.ts";
import { batchOf, FakeConsumer, fakeChain, fakeLedger, fakeReceipts, fence, identity } from "../../../test/support/indexer-fakes.ts";

const TOPIC = "p.log.1";

function setup() {
  const journal: string[] = [];
  const state = new IndexerState({ groups: ["1"], topicPrefix: "p.", queryTimeoutMs: 10_000, readyMaxLag: 100, now: () => Date.now() });
  state.accept("1", { epoch: 1, identity, fence });
  state.consuming();
  const ledger = fakeLedger(journal);
  const chain = fakeChain(journal);
  const receipts = fakeReceipts(journal);
  const starts = { low: 0, logStart: vi.fn(async (_t: string, _p: number) => starts.low) };
  const onFence = vi.fn((_reason: string) => {});
  const pipeline = new BatchPipeline({
    ledger,
    chain,
    receipts,
    logStarts: starts,
    state,
    logger: silentLogger,
    now: () => Date.now(),
    onFence,
  });
  const consumer = new FakeConsumer(journal);
  /** Hands the batches over in one turn, as the consumer does with the partitions of one fetch, and waits for them. */
  const deliver = async (...batches: FetchedBatch[]) => {
    const done = Promise.all(batches.map((b) => pipeline.onBatch(consumer, b)));
    await vi.advanceTimersByTimeAsync(0);
    await done;
    await pipeline.idle();
  };
  return { journal, state, ledger, chain, receipts, starts, pipeline, consumer, deliver, onFence };
}

/** A seal held open until `release()`. */
function holdSeals(ledger: ReturnType<typeof fakeLedger>): () => void {
  let release = () => {};
  ledger.hold = new Promise<void>((r) => {
    release = () => {
      ledger.hold = undefined;
      r();
    };
  });
  return () => release();
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("BatchPipeline", () => {
  it("seals, writes the chain record, announces the receipts, then commits the offset", async () => {
    const t = setup();
    const b = batchOf(TOPIC, 0, [5, 6]);
    await t.deliver(b);
    expect(t.journal).toEqual(["seal 0:5,0:6", "chain 1", "receipts 1", "commit 0@7"]);
    expect(b.resolved).toEqual([6]);
    expect(t.state.sealedBlocks).toBe(1);
  });

  it("seals the partitions of one fetch together, in one seal, and commits them together", async () => {
    const t = setup();
    await t.deliver(batchOf(TOPIC, 0, [5, 6]), batchOf(TOPIC, 1, [3]), batchOf(TOPIC, 2, [9]));
    expect(t.journal).toEqual(["seal 0:5,0:6,1:3,2:9", "chain 1", "receipts 1", "commit 0@7,1@4,2@10"]);
    expect(t.ledger.seal).toHaveBeenCalledTimes(1);
  });

  it("batches arriving while a seal runs wait, and are sealed together in the next one", async () => {
    const t = setup();
    const release = holdSeals(t.ledger);
    const first = t.pipeline.onBatch(t.consumer, batchOf(TOPIC, 0, [5]));
    await vi.advanceTimersByTimeAsync(0);
    const later = [t.pipeline.onBatch(t.consumer, batchOf(TOPIC, 1, [3])), t.pipeline.onBatch(t.consumer, batchOf(TOPIC, 2, [7]))];
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ledger.seal).toHaveBeenCalledTimes(1);
    release();
    await Promise.all([first, ...later]);
    expect(t.journal.filter((l) => l.startsWith("seal"))).toEqual(["seal 0:5", "seal 1:3,2:7"]);
  });

  it("a round's batches are done once sealed and the round before announced: one round of announcements in flight at most", async () => {
    const t = setup();
    let releaseChain = () => {};
    t.chain.record.mockImplementationOnce(async (_e, _l, blocks) => {
      t.journal.push(`chain ${blocks.map((b) => b.height).join(",")} (held)`);
      await new Promise<void>((r) => {
        releaseChain = r;
      });
      return true;
    });
    const b1 = batchOf(TOPIC, 0, [5]);
    const first = t.pipeline.onBatch(t.consumer, b1);
    await vi.advanceTimersByTimeAsync(0);
    await first; // sealed; its chain record is still being written
    expect(b1.resolved).toEqual([5]);
    expect(t.receipts.announce).not.toHaveBeenCalled();
    let secondDone = false;
    const second = t.pipeline.onBatch(t.consumer, batchOf(TOPIC, 0, [6])).then(() => {
      secondDone = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ledger.seal).toHaveBeenCalledTimes(2); // sealed while the first round's record is written
    expect(secondDone).toBe(false);
    releaseChain();
    await second;
    await t.pipeline.idle();
    expect(t.journal).toEqual([
      "seal 0:5",
      "chain 1 (held)",
      "seal 0:6",
      "receipts 1",
      "commit 0@6",
      "chain 2",
      "receipts 2",
      "commit 0@7",
    ]);
  });

  it("a failing announcement does not stop later rounds from being sealed and announced", async () => {
    const t = setup();
    t.receipts.announce.mockImplementationOnce(() => {
      throw new Error("Connection is closed.");
    });
    await t.deliver(batchOf(TOPIC, 0, [5]));
    await t.deliver(batchOf(TOPIC, 0, [6]));
    expect(t.journal).toEqual(["seal 0:5", "chain 1", "seal 0:6", "chain 2", "receipts 2", "commit 0@7"]);
  });

  it("announces nothing when the chain record could not be written, and still commits (the ledger has the blocks)", async () => {
    const t = setup();
    t.chain.ok = false;
    await t.deliver(batchOf(TOPIC, 0, [5]));
    expect(t.journal).toEqual(["seal 0:5", "chain 1", "commit 0@6"]);
    expect(t.receipts.announce).not.toHaveBeenCalled();
  });

  it("answers keyed publishes sealed without an event after the round's receipts, and not when its chain record failed", async () => {
    const t = setup();
    t.ledger.answers = [{ requestId: "r7", gatewayId: "gw", outcome: "duplicate", eventId: "a-1-1" }];
    await t.deliver(batchOf(TOPIC, 0, [5]));
    expect(t.journal).toEqual(["seal 0:5", "chain 1", "receipts 1", "answers r7", "commit 0@6"]);
    t.chain.ok = false;
    await t.deliver(batchOf(TOPIC, 0, [6]));
    expect(t.receipts.answer).toHaveBeenCalledTimes(1);
  });

  it("a failed seal fails its batches and commits nothing, so Kafka hands them over again", async () => {
    const t = setup();
    t.ledger.failWith = new Error("connection terminated");
    const started = vi.spyOn(t.state, "sealStarted");
    const ended = vi.spyOn(t.state, "sealEnded");
    const b = batchOf(TOPIC, 0, [5]);
    const done = t.pipeline.onBatch(t.consumer, b);
    const failed = expect(done).rejects.toThrow("connection terminated");
    await vi.advanceTimersByTimeAsync(0);
    await failed;
    expect(t.consumer.commit).not.toHaveBeenCalled();
    expect(t.chain.record).not.toHaveBeenCalled();
    expect(b.resolved).toEqual([]);
    // The state is told the seal ended, so readiness does not report it stuck later.
    expect(started).toHaveBeenCalledTimes(1);
    expect(ended).toHaveBeenCalledTimes(1);
  });

  it("a batch past the ledger's position is fetched again from it while the log holds it", async () => {
    const t = setup();
    t.ledger.gaps = [{ groupId: "1", partition: 0, expected: 5, got: 8 }];
    t.starts.low = 3;
    const b = batchOf(TOPIC, 0, [8, 9]);
    await t.deliver(b);
    expect(t.consumer.seeks).toEqual([{ topic: TOPIC, partition: 0, offset: 5 }]);
    expect(t.consumer.commit).not.toHaveBeenCalled();
    expect(b.resolved).toEqual([]);
    expect(t.state.seeksToLedger).toBe(1);
    expect(t.state.readiness()).toEqual({ ready: true });
  });

  it("a gap in one partition leaves the other partitions of the fetch sealed and committed", async () => {
    const t = setup();
    t.ledger.gaps = [{ groupId: "1", partition: 1, expected: 2, got: 4 }];
    await t.deliver(batchOf(TOPIC, 0, [5]), batchOf(TOPIC, 1, [4]));
    expect(t.journal).toEqual(["seal 0:5,1:4", "chain 1", "receipts 1", "commit 0@6"]);
    expect(t.consumer.seeks).toEqual([{ topic: TOPIC, partition: 1, offset: 2 }]);
  });

  it("a batch past the ledger's position that the log no longer holds refuses the group and pauses its log", async () => {
    const t = setup();
    const gap: OffsetGap = { groupId: "1", partition: 0, expected: 5, got: 8 };
    t.ledger.gaps = [gap];
    t.starts.low = 7; // retention removed 5 and 6
    await t.deliver(batchOf(TOPIC, 0, [8, 9]));
    expect(t.consumer.seeks).toEqual([]);
    expect(t.consumer.paused).toEqual([TOPIC]);
    expect(t.consumer.commit).not.toHaveBeenCalled();
    expect(t.state.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/partition 0: ledger 5, log starts at 7/) });
    // What is fetched of it later is paused again, never sealed.
    t.ledger.gaps = [];
    await t.deliver(batchOf(TOPIC, 1, [1]));
    expect(t.ledger.seal).toHaveBeenCalledTimes(1);
    expect(t.consumer.paused).toEqual([TOPIC, TOPIC]);
  });

  it("pauses, and never seals, the partitions of a refused group and of a topic it does not index", async () => {
    const t = setup();
    t.state.refuse("1", "refused for the test");
    await t.deliver(batchOf(TOPIC, 0, [5]), batchOf("p.log.9", 0, [1]));
    expect(t.ledger.seal).not.toHaveBeenCalled();
    expect(t.consumer.paused).toEqual([TOPIC, "p.log.9"]);
  });

  it("ignores a stale batch (its partition was sought elsewhere since the fetch)", async () => {
    const t = setup();
    await t.deliver(batchOf(TOPIC, 0, [5], { current: false }));
    expect(t.journal).toEqual([]);
  });

  it("heartbeats while a seal runs, and stops when it ends", async () => {
    const t = setup();
    const release = holdSeals(t.ledger);
    const b = batchOf(TOPIC, 0, [5]);
    const done = t.pipeline.onBatch(t.consumer, b);
    await vi.advanceTimersByTimeAsync(3_500);
    expect(b.heartbeats).toBe(3);
    release();
    await done;
    const after = b.heartbeats;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(b.heartbeats).toBe(after);
  });

  it("is not ready while a seal runs past twice the query timeout, and ready again once it ends", async () => {
    const t = setup();
    const release = holdSeals(t.ledger);
    const done = t.pipeline.onBatch(t.consumer, batchOf(TOPIC, 0, [5]));
    await vi.advanceTimersByTimeAsync(15_000);
    expect(t.state.readiness()).toEqual({ ready: true });
    await vi.advanceTimersByTimeAsync(6_000);
    expect(t.state.readiness()).toEqual({ ready: false, reason: expect.stringMatching(/a seal has been running for 21 s/) });
    release();
    await done;
    expect(t.state.readiness()).toEqual({ ready: true });
  });

  it("reports each stage's time: the gateway's queue, Kafka to the indexer, the seal, the chain record, the commit", async () => {
    const t = setup();
    const seen: string[] = [];
    const pipeline = new BatchPipeline({
      ledger: t.ledger,
      chain: t.chain,
      receipts: t.receipts,
      logStarts: t.starts,
      state: t.state,
      logger: silentLogger,
      onFence: t.onFence,
      now: () => Date.now(),
      timings: (stage, seconds) => void seen.push(`${stage} ${seconds}`),
    });
    vi.setSystemTime(2_000);
    const done = pipeline.onBatch(t.consumer, batchOf(TOPIC, 0, [5])); // built by the gateway at 0 (publishedAt)
    await vi.advanceTimersByTimeAsync(0);
    await done;
    await pipeline.idle();
    // Sent by the gateway's producer at 500 (the record's Kafka timestamp).
    expect(seen).toEqual([
      "log_to_indexer 2",
      "gateway_queue 0.5",
      "kafka_to_indexer 1.5",
      "seal 0",
      "chain_record 0",
      "round 0",
      "offset_commit 0",
    ]);
  });

  it("is not ready while a partition lags more than READY_MAX_LAG_RECORDS behind the log end", async () => {
    const t = setup();
    await t.deliver(batchOf(TOPIC, 0, [5], { lag: 500 }));
    expect(t.state.readiness()).toEqual({ ready: false, reason: "lagging behind the log: p.log.1:0 by 500 records" });
    await t.deliver(batchOf(TOPIC, 0, [6], { lag: 100 }));
    expect(t.state.readiness()).toEqual({ ready: true });
  });

  it("seals each round on the head the last one made, starting from the matched fence", async () => {
    const t = setup();
    await t.deliver(batchOf(TOPIC, 0, [5]));
    await t.deliver(batchOf(TOPIC, 0, [6]));
    expect(t.ledger.seal.mock.calls.map((c) => c[3])).toEqual([fence, { ...fence, height: 1, hash: "0x1" }]);
    expect(t.state.logs.get("1")?.fence).toEqual({ ...fence, height: 2, hash: "0x2" });
  });

  // Issue 19: a ledger dropped, recreated or restored under a running indexer was sealed on from
  // whatever head it had, renaming acknowledged events. A fenced seal writes nothing; the round
  // must then announce nothing, commit nothing, refuse the group and ask for a rematch.
  it("a fenced seal refuses the group, pauses its partitions, announces nothing and asks for a rematch", async () => {
    const t = setup();
    t.ledger.failWith = new LedgerFenceError("1", "group 1: the chain head moved back from 4 to 2 (a restored backup?)");
    const b = batchOf(TOPIC, 0, [5, 6]);
    await t.deliver(b);
    expect(t.journal).toEqual(["seal 0:5,0:6"]);
    expect(b.resolved).toEqual([]);
    expect(t.consumer.paused).toEqual([TOPIC]);
    expect(t.state.logs.has("1")).toBe(false);
    expect(t.state.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(/moved back from 4 to 2.*matching the ledger again/),
    });
    expect(t.onFence).toHaveBeenCalledTimes(1);
    // Later batches of the refused group are not sealed.
    t.ledger.failWith = undefined;
    await t.deliver(batchOf(TOPIC, 0, [7]));
    expect(t.ledger.seal).toHaveBeenCalledTimes(1);
  });

  // Issue 19: the indexer answered 200 for 28 s while every seal failed. Not ready from the first
  // failed seal until one succeeds; the gateways hear the same through canSeal.
  it("a failed seal makes the indexer not ready, and unable to seal its group, until a seal succeeds", async () => {
    const t = setup();
    t.ledger.failWith = new Error("connect ECONNREFUSED 127.0.0.1:5432");
    const failed = t.pipeline.onBatch(t.consumer, batchOf(TOPIC, 0, [5])).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(0);
    expect(String(await failed)).toMatch(/ECONNREFUSED/);
    expect(t.state.readiness()).toEqual({ ready: false, reason: "the last seal failed: connect ECONNREFUSED 127.0.0.1:5432" });
    expect(t.state.canSeal("1")).toMatchObject({ ready: false });
    t.ledger.failWith = undefined;
    await t.deliver(batchOf(TOPIC, 0, [5]));
    expect(t.state.readiness()).toEqual({ ready: true });
    expect(t.state.canSeal("1")).toEqual({ ready: true, ledger: "ledger-1" });
  });
});
