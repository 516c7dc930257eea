import { describe, expect, it } from "vitest";
import { type ChainEntry, type ChainTopicView, chainEntryOf, decideChainAppend } from "./chain-append.ts";
import type { ChainRecord } from "./chain-record.ts";

/** Block `height` of a chain whose hashes are `<fork>h<height>`; `fork` names the ledger that sealed it. */
const rec = (height: number, fork = "a", o: Partial<ChainRecord> = {}): ChainRecord => ({
  v: 1,
  groupId: "1",
  height,
  hash: `${fork}h${height}`,
  prevHash: height === 1 ? "genesis" : `${fork}h${height - 1}`,
  timestampMs: 1000 + height,
  sealer: "0x0",
  sealerIndex: 0,
  epoch: 1,
  clusterId: "c",
  topicId: "t",
  ranges: [
    { partition: 0, from: height * 10, to: height * 10 + 9 },
    { partition: 1, from: height, to: height },
  ],
  ...o,
});

/** What a tail that read `records` (first record of a height kept) knows, remembering heights from `since`. */
function view(records: readonly ChainRecord[], since = 1): ChainTopicView {
  const entries = new Map<number, ChainEntry>();
  for (const r of records) if (r.height >= since && !entries.has(r.height)) entries.set(r.height, chainEntryOf(r));
  return { lastHeight: Math.max(0, ...records.map((r) => r.height)), since, entries };
}

const chain = [rec(1), rec(2), rec(3)];

// Fault survived by all of these: a second ledger sealing on the same log writes its own blocks
// for heights the chain topic already holds; a rebuild could not tell which history clients got.
describe("decideChainAppend", () => {
  it("appends records that continue the topic, into an empty topic, or past a gap a later write fills", () => {
    expect(decideChainAppend("1", view([]), [rec(1), rec(2)])).toEqual({ kind: "append" });
    expect(decideChainAppend("1", view(chain), [rec(4), rec(5)])).toEqual({ kind: "append" });
    expect(decideChainAppend("1", view(chain), [rec(6)])).toEqual({ kind: "append" });
    expect(decideChainAppend("1", view([...chain, rec(6)]), [rec(4), rec(5)])).toEqual({ kind: "append" });
  });

  it("lets a record the topic holds be written again, whatever order its ranges come in", () => {
    const again = rec(2, "a", { ranges: [...rec(2).ranges].reverse() });
    expect(decideChainAppend("1", view(chain), [again, rec(3), rec(4)])).toEqual({ kind: "append" });
  });

  it("refuses a record for a held height with another hash, naming group, height and both hashes", () => {
    const d = decideChainAppend("7", view(chain), [rec(3, "b", { groupId: "7" })]);
    expect(d).toMatchObject({ kind: "refuse", height: 3, inTopic: "ah3", offered: "bh3" });
    expect(d.kind === "refuse" && d.reason).toMatch(/^group 7: height 3 is ah3 in the chain topic, bh3 in this ledger/);
  });

  it("refuses the same hash with other content: a later record must not replace the earlier under compaction", () => {
    const d = decideChainAppend("1", view(chain), [rec(2, "a", { ranges: [{ partition: 0, from: 20, to: 25 }] })]);
    expect(d).toMatchObject({ kind: "refuse", height: 2, inTopic: "ah2", offered: "ah2" });
    expect(decideChainAppend("1", view(chain), [rec(2, "a", { epoch: 2 })]).kind).toBe("refuse");
  });

  it("refuses a next block that does not follow the topic's last, or a gap filler its neighbour does not follow", () => {
    expect(decideChainAppend("1", view(chain), [rec(4, "b")])).toMatchObject({ kind: "refuse", height: 3, inTopic: "ah3", offered: "bh3" });
    const gapped = view([rec(1), rec(2), rec(4)]);
    expect(decideChainAppend("1", gapped, [rec(3, "b", { prevHash: "ah2" })])).toMatchObject({
      kind: "refuse",
      height: 3,
      inTopic: "ah3",
      offered: "bh3",
    });
  });

  it("judges a write's later records against its earlier ones", () => {
    expect(decideChainAppend("1", view(chain), [rec(4), rec(5, "b")])).toMatchObject({ kind: "refuse", height: 4 });
    expect(decideChainAppend("1", view(chain), [rec(4), rec(4, "b")])).toMatchObject({ kind: "refuse", height: 4 });
  });

  it("cannot judge a height older than the view remembers, and says so instead of allowing it", () => {
    const d = decideChainAppend("1", view([rec(1), rec(2), rec(3), rec(5)], 3), [rec(2, "b")]);
    expect(d).toMatchObject({ kind: "unknown" });
    expect(decideChainAppend("1", view([rec(1), rec(2), rec(3), rec(5)], 3), [rec(4)])).toEqual({ kind: "append" });
  });
});
