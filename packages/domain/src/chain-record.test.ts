import { describe, expect, it } from "vitest";
import { type PositionedRecord, planBlock } from "./block-plan.ts";
import { GENESIS_HASH } from "./chain.ts";
import {
  chainRecordKey,
  chainRecordOf,
  chainRecordsByHeight,
  chainTopicName,
  decodeChainRecord,
  encodeChainRecord,
} from "./chain-record.ts";

const rec = (offset: number, topic: string | null): PositionedRecord => ({
  partition: 2,
  offset,
  record:
    topic === null
      ? null
      : {
          v: 1,
          requestId: `r${offset}`,
          gatewayId: "g",
          groupId: "1",
          topic,
          content: `c${offset}`,
          extensions: {},
          sender: "s",
          publishedAt: 0,
        },
});
const head = { height: 4, hash: GENESIS_HASH, nextOffsets: new Map([[2, 10]]), topics: new Map() };

describe("chain records", () => {
  it("round-trip, and name the topic per group", () => {
    const plan = planBlock(head, [rec(10, "a"), rec(11, null)], { groupId: "1", timestampMs: 5, sealerIndex: 2 });
    const r = chainRecordOf(plan.block as NonNullable<typeof plan.block>, 3, { clusterId: "c", topicId: "t" });
    expect(r).toMatchObject({ height: 5, epoch: 3, sealer: "0x2", ranges: [{ partition: 2, from: 10, to: 11 }] });
    expect(decodeChainRecord(encodeChainRecord(r))).toEqual(r);
    expect(chainTopicName("evb.", "1")).toBe("evb.chain.1");
  });

  it("a record and the log's records in its ranges seal the same block again", () => {
    const opts = { groupId: "1", timestampMs: 1_700_000_000_000, sealerIndex: 7 };
    const records = [rec(10, "a"), rec(11, "b"), rec(12, null)];
    const first = planBlock(head, records, opts).block;
    const r = chainRecordOf(first as NonNullable<typeof first>, 1, { clusterId: "c", topicId: "t" });
    const again = planBlock(head, records, { groupId: r.groupId, timestampMs: r.timestampMs, sealerIndex: r.sealerIndex }).block;
    expect(again?.hash).toBe(r.hash);
    expect(again?.events.map((e) => e.eventId)).toEqual(first?.events.map((e) => e.eventId));
  });

  it("anything else decodes to null", () => {
    expect(decodeChainRecord(null)).toBeNull();
    expect(decodeChainRecord(Buffer.from("{"))).toBeNull();
    expect(decodeChainRecord(Buffer.from('{"v":2}'))).toBeNull();
  });
});

// Issue 19: records were keyed by height, so a second, different record for a height (a ledger
// restored under a running indexer sealed the blocks after the dump again) replaced the first in
// the compacted chain topic, and a later restart found nothing wrong.
describe("chain records keep the history", () => {
  const at = (height: number, hash: string) =>
    ({ height, hash, prevHash: "0x", groupId: "1" }) as unknown as Parameters<typeof chainRecordKey>[0] & {
      groupId: string;
    };
  it("keys a record by height and hash: a rewrite of the same block keeps its key, another block for the height does not", () => {
    expect(chainRecordKey({ height: 5, hash: "0xaa" })).toBe("5:0xaa");
    expect(chainRecordKey({ height: 5, hash: "0xaa" })).not.toBe(chainRecordKey({ height: 5, hash: "0xbb" }));
  });

  it("finds the heights that hold two different records, and keeps the first of each", () => {
    const records = [at(1, "0x1"), at(2, "0x2"), at(2, "0x2"), at(3, "0x3"), at(3, "0x3b"), at(4, "0x4")] as never[];
    const { byHeight, conflicts } = chainRecordsByHeight(records);
    expect(conflicts).toEqual([3]);
    expect([...byHeight.keys()]).toEqual([1, 2, 3, 4]);
    expect((byHeight.get(3) as { hash: string }).hash).toBe("0x3");
  });
});
