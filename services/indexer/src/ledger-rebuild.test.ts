import { type ChainRecord, encodeLogRecord, GENESIS_HASH, type LogIdentity } from "@evb/domain";
import type { LogInspector, LogMessage } from "@evb/eventlog";
import type { LogEpochStore } from "@evb/storage";
import { traceparentHeaders } from "@evb/telemetry";
import { describe, expect, it } from "vitest";
import { logRangesOf, planReplay, recordsOfBlock } from "./ledger-rebuild.ts";

const LOG: LogIdentity = { clusterId: "c1", topicId: "t1" };

function record(height: number, prevHash: string, ranges: ChainRecord["ranges"], over: Partial<ChainRecord> = {}): ChainRecord {
  return {
    v: 1,
    groupId: "1",
    height,
    hash: `h${height}`,
    prevHash,
    timestampMs: 1_000 * height,
    sealer: "s",
    sealerIndex: 0,
    epoch: 1,
    ...LOG,
    ranges,
    ...over,
  };
}

/** Records 1..n, each sealed from offsets [2(h-1), 2h-1] of partition 0. */
function chain(n: number): ChainRecord[] {
  return Array.from({ length: n }, (_, i) =>
    record(i + 1, i === 0 ? GENESIS_HASH : `h${i}`, [{ partition: 0, from: 2 * i, to: 2 * i + 1 }]),
  );
}

function options(opts: { low?: number; high?: number; epochTaken?: boolean } = {}) {
  const ensured: number[] = [];
  const inspector = {
    identity: async () => LOG,
    offsets: async () => [{ partition: 0, low: opts.low ?? 0, high: opts.high ?? 100 }],
  } as unknown as LogInspector;
  const epochs = {
    ensureEpoch: async (_g: string, epoch: number) => {
      ensured.push(epoch);
      return !opts.epochTaken;
    },
  } as unknown as LogEpochStore;
  return { o: { groupId: "1", logTopic: "evb.log.1", inspector, epochs, now: () => 0 }, ensured };
}

describe("logRangesOf", () => {
  it("covers every record's ranges with one range per partition", () => {
    const records = [
      record(1, GENESIS_HASH, [
        { partition: 0, from: 5, to: 9 },
        { partition: 2, from: 0, to: 0 },
      ]),
      record(2, "h1", [{ partition: 0, from: 10, to: 12 }]),
      record(3, "h2", [{ partition: 0, from: 3, to: 4 }]),
    ];
    expect([...logRangesOf(records)]).toEqual([
      [0, { from: 3, to: 12 }],
      [2, { from: 0, to: 0 }],
    ]);
  });
});

describe("planReplay", () => {
  it("plans the ranges of records that continue the ledger, recording their epochs", async () => {
    const { o, ensured } = options();
    expect(await planReplay(o, GENESIS_HASH, 0, chain(3))).toEqual({ ok: true, ranges: new Map([[0, { from: 0, to: 5 }]]) });
    expect(ensured).toEqual([1, 1, 1]);
  });

  it("refuses records with a gap", async () => {
    const [a, , c] = chain(3);
    expect(await planReplay(options().o, GENESIS_HASH, 0, [a as ChainRecord, c as ChainRecord])).toEqual({
      ok: false,
      why: "the chain records have gaps",
    });
  });

  it("refuses records that do not continue the ledger's last block", async () => {
    expect(await planReplay(options().o, "other", 0, chain(2))).toEqual({
      ok: false,
      why: "they do not continue this ledger's last block",
    });
  });

  it("refuses records sealed from another log", async () => {
    const records = chain(2).map((r) => ({ ...r, topicId: "t2" }));
    const plan = await planReplay(options().o, GENESIS_HASH, 0, records);
    expect(plan).toEqual({ ok: false, why: "some were sealed from another Kafka log than evb.log.1 (cluster c1, topic t1)" });
  });

  it("refuses, recording no epoch, when the log no longer holds the records' offsets", async () => {
    const { o, ensured } = options({ low: 2 });
    expect(await planReplay(o, GENESIS_HASH, 0, chain(2))).toEqual({ ok: false, why: "the log no longer holds partition 0 offsets 0..3" });
    expect(ensured).toEqual([]);
  });

  it("refuses when an epoch the records name is another log's", async () => {
    expect(await planReplay(options({ epochTaken: true }).o, GENESIS_HASH, 0, chain(1))).toEqual({
      ok: false,
      why: "epoch 1 of this ledger is another log",
    });
  });
});

describe("recordsOfBlock", () => {
  const TP = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const message = (offset: number, traced: boolean): LogMessage => ({
    offset,
    key: null,
    value: encodeLogRecord({
      v: 1,
      requestId: String(offset),
      gatewayId: "g",
      groupId: "1",
      topic: "t",
      content: "c",
      extensions: {},
      sender: "0x0",
      publishedAt: 1,
    }),
    timestampMs: 1,
    headers: traced ? [...traceparentHeaders(TP)] : [],
  });

  it("takes the block's offsets of each range, each record with the traceparent its Kafka record carries", () => {
    const fetched = new Map([[0, [message(0, true), message(1, false), message(2, true), message(3, true)]]]);
    const batch = recordsOfBlock({ ranges: [{ partition: 0, from: 1, to: 2 }] }, fetched);
    expect(batch.map((b) => [b.offset, b.record?.topic, b.traceparent])).toEqual([
      [1, "t", undefined],
      [2, "t", TP],
    ]);
  });
});
