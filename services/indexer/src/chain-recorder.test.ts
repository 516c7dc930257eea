import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type ChainRecord, chainRecordOf, type Logger, type SealedBlock } from "@evb/domain";
import { ChainRecorder } from "./chain-recorder.ts";
import { fakeChainTopic, identity } from "../../../test/support/indexer-fakes.ts";

/** Block `height` of the chain ledger `fork` sealed: hashes `<fork><height>`, each on the one before. */
const block = (height: number, fork = "a") =>
  ({
    groupId: "1",
    height,
    hash: `${fork}${height}`,
    prevHash: height === 1 ? "genesis" : `${fork}${height - 1}`,
    timestampMs: height,
    sealer: "0x0",
    sealerIndex: 0,
    events: [],
    ranges: [{ partition: 0, from: height, to: height }],
  }) as SealedBlock;

const recordOf = (height: number, fork = "a"): ChainRecord => chainRecordOf(block(height, fork), 1, identity);

function setup(o: { writeFails?: boolean; unwritten?: ChainRecord[] } = {}) {
  const topic = fakeChainTopic();
  if (o.writeFails) topic.write.mockRejectedValue(new Error("not enough replicas"));
  const lines: { level: string; msg: string }[] = [];
  const line = (level: string) => (obj: object | string, msg?: string) => void lines.push({ level, msg: msg ?? String(obj) });
  const logger: Logger = { debug: () => {}, info: line("info"), warn: line("warn"), error: line("error") };
  const markWritten = vi.fn(async (_g: string, _h: readonly number[]) => {});
  const unwritten = vi.fn(async (_g: string, _before: number) => [] as ChainRecord[]);
  // The ledger's blocks lacking their record: given once, until marked written.
  let missing = o.unwritten ?? [];
  unwritten.mockImplementation(async () => missing);
  markWritten.mockImplementation(async (_g, heights) => {
    missing = missing.filter((r) => !heights.includes(r.height));
  });
  const onRefuse = vi.fn((_g: string, _reason: string) => {});
  const recorder = new ChainRecorder({
    writer: topic,
    store: { markWritten, unwritten },
    tail: topic,
    topicPrefix: "p.",
    logger,
    now: () => Date.now(),
    onRefuse,
  });
  return { recorder, topic, markWritten, onRefuse, lines, errors: () => lines.filter((l) => l.level === "error") };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("ChainRecorder", () => {
  it("writes the records at once and marks them written in the ledger later, gathered into one update", async () => {
    const t = setup();
    expect(await t.recorder.record(1, identity, [block(1), block(2)])).toBe(true);
    expect(await t.recorder.record(1, identity, [block(3)])).toBe(true);
    expect(t.topic.write).toHaveBeenCalledTimes(2);
    expect(t.topic.write).toHaveBeenCalledWith("p.chain.1", [
      expect.objectContaining({ height: 1 }),
      expect.objectContaining({ height: 2 }),
    ]);
    expect(t.markWritten).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(200);
    expect(t.markWritten.mock.calls).toEqual([["1", [1, 2, 3]]]);
  });

  it("a write Kafka refused is reported and never marked written", async () => {
    const t = setup({ writeFails: true });
    expect(await t.recorder.record(1, identity, [block(1)])).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.markWritten).not.toHaveBeenCalled();
  });

  it("close marks what is still waiting", async () => {
    const t = setup();
    await t.recorder.record(1, identity, [block(4)]);
    await t.recorder.close();
    expect(t.markWritten.mock.calls).toEqual([["1", [4]]]);
  });

  it("writes a block the chain topic already holds again: the recorder re-writes after failures", async () => {
    const t = setup();
    expect(await t.recorder.record(1, identity, [block(1), block(2)])).toBe(true);
    expect(await t.recorder.record(1, identity, [block(2), block(3)])).toBe(true);
    expect(t.topic.write).toHaveBeenCalledTimes(2);
    expect(t.errors()).toEqual([]);
  });

  // Fault survived: a second ledger sealing on the same log (another deployment on this Kafka, a
  // ledger restored and sealed on) offers its own block for a height the chain topic holds.
  it("refuses another block for a held height: writes nothing, logs one ERROR line and fences the group", async () => {
    const t = setup();
    await t.recorder.record(1, identity, [block(1), block(2)]);
    expect(await t.recorder.record(1, identity, [block(2, "b"), block(3, "b")])).toBe(false);
    expect(t.topic.write).toHaveBeenCalledTimes(1);
    expect(t.topic.at(2)).toBe(1);
    expect(t.errors()).toHaveLength(1);
    expect(t.errors()[0]?.msg).toMatch(/^group 1: height 2 is a2 in the chain topic, b2 in this ledger .*nothing written/);
    expect(t.lines.filter((l) => l.level === "warn")).toEqual([]);
    expect(t.onRefuse.mock.calls).toEqual([["1", t.errors()[0]?.msg]]);
    // Nothing more is written for the group until it is matched again; no second line either.
    expect(await t.recorder.record(1, identity, [block(3)])).toBe(false);
    expect(t.topic.write).toHaveBeenCalledTimes(1);
    expect(t.onRefuse).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.markWritten.mock.calls).toEqual([["1", [1, 2]]]);
  });

  it("refuses a next block that does not follow the chain topic's last one", async () => {
    const t = setup();
    await t.recorder.record(1, identity, [block(1), block(2)]);
    expect(await t.recorder.record(1, identity, [block(3, "b")])).toBe(false);
    expect(t.onRefuse.mock.calls[0]?.[1]).toMatch(/height 2 is a2 in the chain topic, b2 in this ledger/);
    expect(t.topic.at(3)).toBe(0);
  });

  it("does not write while the tail cannot say what the topic holds: a failed write, never a permission", async () => {
    const t = setup();
    t.topic.readable = false;
    expect(await t.recorder.record(1, identity, [block(1)])).toBe(false);
    expect(t.topic.write).not.toHaveBeenCalled();
    expect(t.onRefuse).not.toHaveBeenCalled();
    expect(t.lines).toEqual([{ level: "warn", msg: "could not write chain records; the blocks stay unannounced until they are" }]);
    t.topic.readable = true;
    expect(await t.recorder.record(1, identity, [block(1)])).toBe(true);
  });

  it("judges the records written from the ledger too, and skips a refused group until it is matched again", async () => {
    const t = setup({ unwritten: [recordOf(2, "b")] });
    t.topic.records.push(recordOf(1), recordOf(2));
    await t.recorder.start(["1"]);
    expect(t.topic.write).not.toHaveBeenCalled();
    expect(t.markWritten).not.toHaveBeenCalled();
    expect(t.onRefuse).toHaveBeenCalledTimes(1);
    expect(t.errors()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(25_000);
    expect(t.onRefuse).toHaveBeenCalledTimes(1);
    // A rematch starts it again: judged afresh, refused again.
    await t.recorder.start(["1"]);
    expect(t.onRefuse).toHaveBeenCalledTimes(2);
    expect(t.topic.at(2)).toBe(1);
    await t.recorder.close();
  });

  it("writes the ledger's missing records once the tail can judge them", async () => {
    const t = setup({ unwritten: [recordOf(1), recordOf(2)] });
    t.topic.readable = false;
    await t.recorder.start(["1"]);
    expect(t.lines.map((l) => l.msg)).toEqual(["could not write missing chain records; retrying later"]);
    t.topic.readable = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.topic.records.map((r) => r.height)).toEqual([1, 2]);
    expect(t.markWritten.mock.calls).toEqual([["1", [1, 2]]]);
    await t.recorder.close();
  });
});
