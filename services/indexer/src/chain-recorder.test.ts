import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type SealedBlock, silentLogger } from "@evb/domain";
import type { ChainLogWriter } from "@evb/eventlog";
import type { ChainRecordStore } from "@evb/storage";
import { ChainRecorder } from "./chain-recorder.ts";
import { identity } from "./test-fakes.ts";

const block = (height: number) =>
  ({
    groupId: "1",
    height,
    hash: "h",
    prevHash: "p",
    timestampMs: 0,
    sealer: "0x0",
    sealerIndex: 0,
    events: [],
    ranges: [],
  }) as SealedBlock;

function setup(writeFails = false) {
  const write = vi.fn(async () => {
    if (writeFails) throw new Error("not enough replicas");
  });
  const markWritten = vi.fn(async (_g: string, _h: readonly number[]) => {});
  const recorder = new ChainRecorder({
    writer: { write } as unknown as ChainLogWriter,
    store: { markWritten, unwritten: async () => [] } as unknown as ChainRecordStore,
    topicPrefix: "p.",
    logger: silentLogger,
    now: () => Date.now(),
  });
  return { recorder, write, markWritten };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("ChainRecorder", () => {
  it("writes the records at once and marks them written in the ledger later, gathered into one update", async () => {
    const t = setup();
    expect(await t.recorder.record(1, identity, [block(1), block(2)])).toBe(true);
    expect(await t.recorder.record(1, identity, [block(3)])).toBe(true);
    expect(t.write).toHaveBeenCalledTimes(2);
    expect(t.write).toHaveBeenCalledWith("p.chain.1", [expect.objectContaining({ height: 1 }), expect.objectContaining({ height: 2 })]);
    expect(t.markWritten).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(200);
    expect(t.markWritten.mock.calls).toEqual([["1", [1, 2, 3]]]);
  });

  it("a write Kafka refused is reported and never marked written", async () => {
    const t = setup(true);
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
});
