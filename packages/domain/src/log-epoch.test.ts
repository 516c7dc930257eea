import { describe, expect, it } from "vitest";
import { decideLogEpoch, type EpochDecision, type LedgerEpoch, type LedgerLogState, type LogState } from "./log-epoch.ts";

const A = { clusterId: "cluster-a", topicId: "topic-1" };
const B = { clusterId: "cluster-b", topicId: "topic-9" };
/** partitions as [low, high, committed] */
const log = (identity: typeof A, ...parts: [number, number, number | null][]): LogState => ({
  identity,
  partitions: parts.map(([low, high, committed], partition) => ({ partition, low, high, committed })),
});
const epoch = (n: number, identity: typeof A | null, ...next: number[]): LedgerEpoch => ({
  epoch: n,
  identity,
  nextOffsets: new Map(next.map((o, p) => [p, o])),
});
const ledger = (...epochs: LedgerEpoch[]): LedgerLogState => ({ epochs, nextEpoch: Math.max(0, ...epochs.map((e) => e.epoch)) + 1 });
const summary = (d: EpochDecision) =>
  d.kind === "continue"
    ? `continue ${d.epoch}${d.claim ? " claim" : ""}`
    : d.kind === "adopt"
      ? `adopt ${d.epoch} from ${[...d.from.values()].join(",")}`
      : `refuse ${d.refusal} p${d.partitions.map((p) => p.partition).join(",p")}`;

describe("decideLogEpoch", () => {
  const cases: [string, LedgerLogState, LogState, string][] = [
    ["an empty ledger and an empty log: the first epoch", ledger(), log(A, [0, 0, null], [0, 0, null]), "adopt 1 from 0,0"],
    ["an empty ledger and a log never indexed: indexed from its start", ledger(), log(A, [0, 5, null], [2, 3, null]), "adopt 1 from 0,2"],
    ["the same log, ledger in step", ledger(epoch(1, A, 5, 7)), log(A, [0, 9, 5], [0, 7, 7]), "continue 1"],
    ["the same log, consumer commits lagging the ledger", ledger(epoch(1, A, 5, 7)), log(A, [0, 9, 2], [0, 7, null]), "continue 1"],
    [
      "a fresh cluster under an existing ledger (new checkout, deleted .cache): a new epoch",
      ledger(epoch(1, A, 500, 700)),
      log(B, [0, 0, null], [0, 3, null]),
      "adopt 2 from 0,0",
    ],
    [
      "an earlier log comes back: its own epoch continues",
      ledger(epoch(1, A, 5, 7), epoch(2, B, 1, 1)),
      log(A, [0, 6, 5], [0, 7, null]),
      "continue 1",
    ],
    ["the same log, shorter than the ledger: truncated", ledger(epoch(1, A, 5, 7)), log(A, [0, 5, 5], [0, 3, null]), "refuse truncated p1"],
    [
      "the same log, records never indexed are gone: retention",
      ledger(epoch(1, A, 5, 7)),
      log(A, [6, 9, 5], [0, 7, 7]),
      "refuse retention p0",
    ],
    [
      "the same log, the consumer group committed past the ledger: ledger restored from an older backup",
      ledger(epoch(1, A, 5, 7)),
      log(A, [0, 9, 8], [0, 7, 7]),
      "refuse ledger-behind p0",
    ],
    [
      "a new log that the consumer group already indexed: the ledger was dropped",
      ledger(),
      log(A, [0, 9, 9], [0, 0, null]),
      "refuse ledger-behind p0",
    ],
    [
      "a dropped ledger next to a log retention emptied: its eventIds would be handed out again",
      ledger(),
      log(A, [9, 9, 4], [0, 0, null]),
      "refuse ledger-behind p0",
    ],
    ["a log retention emptied before any indexing: adopt from its start", ledger(), log(A, [9, 9, null], [0, 0, null]), "adopt 1 from 9,0"],
    [
      "an old ledger's epoch 0 is claimed by a log that fits its positions",
      ledger(epoch(0, null, 5, 7)),
      log(A, [0, 9, 5], [0, 7, 7]),
      "continue 0 claim",
    ],
    [
      "an old ledger's epoch 0 and a log shorter than it: a new log, a new epoch",
      ledger(epoch(0, null, 500, 700)),
      log(B, [0, 2, null], [0, 0, null]),
      "adopt 1 from 0,0",
    ],
    [
      "an old ledger's epoch 0 is not claimed by a log that already has its own epoch",
      ledger(epoch(0, null, 5, 7), epoch(1, A, 1, 1)),
      log(A, [0, 9, 1], [0, 7, 1]),
      "continue 1",
    ],
  ];
  it.each(cases)("%s", (_name, l, g, expected) => {
    expect(summary(decideLogEpoch(l, g))).toBe(expected);
  });

  it("a refusal names each partition with the ledger's and the log's offsets", () => {
    const d = decideLogEpoch(ledger(epoch(1, A, 5, 7)), log(A, [6, 9, 5], [0, 7, 7]));
    expect(d).toMatchObject({ kind: "refuse", partitions: [{ partition: 0, ledger: 5, low: 6, high: 9, committed: 5 }] });
    expect(d.kind === "refuse" && d.reason).toMatch(/retention/);
  });
});
