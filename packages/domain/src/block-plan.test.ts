import { describe, expect, it } from "vitest";
import { type BlockPlan, type LedgerHead, type PositionedRecord, planBlock, sortRecords } from "./block-plan.ts";
import { blockHash, GENESIS_HASH, topicAddress, transactionHash } from "./chain.ts";
import { topicHash8 } from "./event-id.ts";
import type { LogRecord } from "./log-record.ts";

const rec = (topic: string, content = "c"): LogRecord => ({
  v: 1,
  requestId: `r-${topic}-${content}`,
  gatewayId: "gw",
  groupId: "1",
  topic,
  content,
  extensions: {},
  sender: "0xs",
  publishedAt: 0,
});
const at = (partition: number, offset: number, topic: string | null, content?: string): PositionedRecord => ({
  partition,
  offset,
  record: topic === null ? null : rec(topic, content),
});
const head = (over: Partial<LedgerHead> = {}): LedgerHead => ({
  height: 0,
  hash: GENESIS_HASH,
  nextOffsets: new Map(),
  topics: new Map(),
  ...over,
});
const opts = { groupId: "1", timestampMs: 1_700_000_000_000, sealerIndex: 3 };
const ids = (p: BlockPlan) => p.block?.events.map((e) => e.eventId) ?? [];
const h = (t: string) => topicHash8(t);

describe("planBlock", () => {
  // [name, head, records, eventIds, advance, rest offsets, gaps]
  const cases: [string, LedgerHead, PositionedRecord[], string[], [number, number][], number[], [number, number, number][]][] = [
    ["first block of a group", head(), [at(0, 0, "a"), at(0, 1, "a")], [`${h("a")}-1-1`, `${h("a")}-2-1`], [[0, 2]], [], []],
    [
      "sequence numbers continue from the ledger's topics",
      head({ height: 4, topics: new Map([["a", { seq: 7, address: "0xa" }]]), nextOffsets: new Map([[0, 10]]) }),
      [at(0, 10, "a")],
      [`${h("a")}-8-5`],
      [[0, 11]],
      [],
      [],
    ],
    [
      "records below the next offset are redeliveries and skipped",
      head({ nextOffsets: new Map([[0, 2]]) }),
      [at(0, 0, "a"), at(0, 1, "a"), at(0, 2, "a")],
      [`${h("a")}-1-1`],
      [[0, 3]],
      [],
      [],
    ],
    ["a fully redelivered batch plans nothing", head({ nextOffsets: new Map([[0, 5]]) }), [at(0, 3, "a"), at(0, 4, "a")], [], [], [], []],
    [
      "an undecodable record advances the offset but makes no event",
      head(),
      [at(0, 0, null), at(0, 1, "a"), at(0, 2, null)],
      [`${h("a")}-1-1`],
      [[0, 3]],
      [],
      [],
    ],
    ["only undecodable records: no block, offsets still advance", head(), [at(0, 0, null)], [], [[0, 1]], [], []],
    [
      "a partition starting past its next offset is a gap and left out",
      head({
        nextOffsets: new Map([
          [0, 1],
          [1, 0],
        ]),
      }),
      [at(0, 5, "a"), at(0, 6, "a"), at(1, 0, "b")],
      [`${h("b")}-1-1`],
      [[1, 1]],
      [],
      [[0, 1, 5]],
    ],
    ["a partition without a position starts where its records start", head(), [at(2, 40, "a")], [`${h("a")}-1-1`], [[2, 41]], [], []],
    [
      "colliding topic hashes: the second event opens the next block",
      head(),
      [at(0, 0, "t26821"), at(0, 1, "t49091"), at(0, 2, "t26821")],
      ["3b787b99-1-1"],
      [[0, 1]],
      [1, 2],
      [],
    ],
  ];
  it.each(cases)("%s", (_name, state, records, eventIds, advance, rest, gaps) => {
    const plan = planBlock(state, sortRecords(records), opts);
    expect(ids(plan)).toEqual(eventIds);
    expect([...plan.advance]).toEqual(advance);
    expect(plan.rest.map((r) => r.offset)).toEqual(rest);
    expect(plan.gaps.map((g) => [g.partition, g.expected, g.got])).toEqual(gaps);
  });

  it("hashes follow chain.ts: tx hashes over the event and seal time, the block hash over the head and sealer", () => {
    const plan = planBlock(head({ height: 9, hash: "0xprev" }), [at(0, 0, "a", "hello")], opts);
    const e = plan.block?.events[0];
    expect(e?.txHash).toBe(
      transactionHash({
        eventId: `${h("a")}-1-10`,
        topic: "a",
        contentBase64: Buffer.from("hello").toString("base64"),
        extensions: {},
        sender: "0xs",
        timestampMs: opts.timestampMs,
      }),
    );
    expect(plan.block).toMatchObject({
      height: 10,
      prevHash: "0xprev",
      sealer: "0x3",
      sealerIndex: 3,
      ranges: [{ partition: 0, from: 0, to: 0 }],
    });
    expect(plan.block?.hash).toBe(
      blockHash({
        groupId: "1",
        height: 10,
        prevHash: "0xprev",
        timestampMs: opts.timestampMs,
        sealer: "0x3",
        txHashes: [e?.txHash as string],
      }),
    );
  });

  it("creates unknown topics with their first event's sender, and not a topic whose event was cut", () => {
    const plan = planBlock(head(), [at(0, 0, "t26821"), at(0, 1, "t49091")], opts);
    expect(plan.newTopics).toEqual([{ name: "t26821", address: topicAddress("1", "t26821"), creator: "0xs" }]);
    expect([...plan.topicSeqs]).toEqual([["t26821", 1]]);
  });

  it("ranges cover undecodable records at the block's edges, per partition", () => {
    const plan = planBlock(head(), sortRecords([at(1, 7, null), at(0, 3, "a"), at(1, 5, "b"), at(1, 6, "b")]), opts);
    expect(plan.block?.ranges).toEqual([
      { partition: 0, from: 3, to: 3 },
      { partition: 1, from: 5, to: 7 },
    ]);
    expect(plan.block?.events.map((e) => [e.partition, e.offset, e.idx])).toEqual([
      [0, 3, 0],
      [1, 5, 1],
      [1, 6, 2],
    ]);
  });

  it("the same inputs give the same block", () => {
    const records = [at(0, 0, "a"), at(0, 1, "b")];
    expect(planBlock(head(), records, opts)).toEqual(planBlock(head(), records, opts));
  });
});
