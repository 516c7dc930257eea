import { EventEmitter } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { type LedgerLogState, type OffsetGap, silentLogger } from "@evb/domain";
import { BlockIndexer, type BlockIndexerOptions } from "./block-indexer.ts";

/** A kafkajs consumer stand-in: records what the indexer asks of it and lets a test drive it. */
class FakeConsumer extends EventEmitter {
  events = { CRASH: "crash", GROUP_JOIN: "join" };
  seeks: unknown[] = [];
  paused: unknown[] = [];
  eachBatch?: (payload: unknown) => Promise<void>;
  connect = vi.fn(async () => {});
  subscribe = vi.fn(async () => {});
  disconnect = vi.fn(async () => {});
  commitOffsets = vi.fn(async () => {});
  seek = (e: unknown) => void this.seeks.push(e);
  pause = (e: unknown) => void this.paused.push(e);
  run = vi.fn(async (o: { eachBatch: (payload: unknown) => Promise<void> }) => {
    this.eachBatch = o.eachBatch;
  });
}

const identity = { clusterId: "c", topicId: "t" };

/** `opts.low`: the log's start offset, which a test may move (retention) after the start. */
function setup(opts: { ledger?: LedgerLogState; committed?: number; gaps?: OffsetGap[]; low?: number } = {}) {
  const consumers: FakeConsumer[] = [];
  const onFatal = vi.fn();
  const sealed = { blocks: [], gaps: opts.gaps ?? [] };
  const indexer = new BlockIndexer({
    kafka: {
      consumer: () => {
        const c = new FakeConsumer();
        consumers.push(c);
        return c;
      },
    },
    sealer: { seal: vi.fn(async () => sealed) },
    epochs: {
      read: async () => opts.ledger ?? { epochs: [{ epoch: 1, identity, nextOffsets: new Map([[0, 5]]) }], nextEpoch: 2 },
      positions: async () => new Map([[0, 5]]),
    },
    inspector: {
      identity: async () => identity,
      committed: async () => new Map(opts.committed === undefined ? [] : [[0, opts.committed]]),
      offsets: async () => [{ partition: 0, low: opts.low ?? 0, high: 10 }],
    },
    chain: { start: async () => {}, record: async () => true, close: async () => {} },
    rebuild: async () => ({ ok: true }),
    redis: { status: "ready" },
    groups: ["1"],
    topicPrefix: "p.",
    redisPrefix: "r",
    consumerGroup: "g",
    maxBatchBytes: 1 << 20,
    queryTimeoutMs: 10_000,
    readyMaxLag: 100,
    logger: silentLogger,
    onFatal,
  } as unknown as BlockIndexerOptions);
  return { indexer, consumers, onFatal, opts };
}

const batchOf = (offsets: number[]) => ({
  batch: { topic: "p.log.1", partition: 0, messages: offsets.map((o) => ({ offset: String(o), value: null })), offsetLag: () => "0" },
  resolveOffset: () => {},
  heartbeat: async () => {},
  isRunning: () => true,
  isStale: () => false,
});

describe("BlockIndexer", () => {
  it("outlives two database calls with its Kafka session", () => {
    expect(setup().indexer.sessionTimeoutMs).toBeGreaterThan(2 * 10_000);
  });

  it("a consumer kafkajs stops for good is replaced in the same process; not ready meanwhile", async () => {
    const { indexer, consumers, onFatal } = setup();
    await indexer.start();
    expect(indexer.readiness()).toEqual({ ready: true });
    consumers[0]?.emit("crash", { payload: { error: new Error("The coordinator is not aware of this member"), restart: false } });
    expect(indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/re-joining/) });
    await vi.waitFor(() => expect(consumers).toHaveLength(2), { timeout: 5_000 });
    await vi.waitFor(() => expect(indexer.readiness()).toEqual({ ready: true }));
    expect(indexer.consumerRestarts).toBe(1);
    expect(consumers[0]?.disconnect).toHaveBeenCalled();
    expect(onFatal).not.toHaveBeenCalled();
    await indexer.close();
  });

  it("a refused log starts no consumer and makes the indexer not ready, with the reason", async () => {
    const { indexer, consumers } = setup({ committed: 8 });
    await indexer.start();
    expect(consumers).toHaveLength(0);
    expect(indexer.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(/^group 1: refusing log p\.log\.1: .*committed 8/),
    });
  });

  it("on assignment, seeks to the ledger's positions and commits them", async () => {
    const { indexer, consumers } = setup();
    await indexer.start();
    consumers[0]?.emit("join", { payload: { memberAssignment: { "p.log.1": [0] } } });
    await vi.waitFor(() => expect(consumers[0]?.seeks).toEqual([{ topic: "p.log.1", partition: 0, offset: "5" }]));
    expect(consumers[0]?.commitOffsets).toHaveBeenCalledWith([{ topic: "p.log.1", partition: 0, offset: "5" }]);
  });

  it("a batch past the ledger's position is fetched again from it while the log holds it", async () => {
    const { indexer, consumers } = setup({ gaps: [{ groupId: "1", partition: 0, expected: 5, got: 8 }], low: 3 });
    await indexer.start();
    await consumers[0]?.eachBatch?.(batchOf([8, 9]));
    expect(consumers[0]?.seeks).toEqual([{ topic: "p.log.1", partition: 0, offset: "5" }]);
    expect(consumers[0]?.commitOffsets).not.toHaveBeenCalled();
    expect(indexer.readiness().ready).toBe(true);
  });

  it("a batch past the ledger's position that the log no longer holds refuses the group", async () => {
    const { indexer, consumers, opts } = setup({ gaps: [{ groupId: "1", partition: 0, expected: 5, got: 8 }] });
    await indexer.start();
    opts.low = 7; // retention removed 5 and 6 meanwhile
    await consumers[0]?.eachBatch?.(batchOf([8, 9]));
    expect(consumers[0]?.seeks).toEqual([]);
    expect(consumers[0]?.paused).toEqual([[{ topic: "p.log.1" }]]);
    expect(indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/partition 0: ledger 5, log starts at 7/) });
  });
});
