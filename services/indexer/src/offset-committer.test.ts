import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { OffsetCommitter } from "./offset-committer.ts";
import { FakeConsumer } from "../../../test/support/indexer-fakes.ts";

const committer = () => new OffsetCommitter({ logger: silentLogger, minIntervalMs: 200, now: () => Date.now() });

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("OffsetCommitter", () => {
  it("commits at once, then at most once per interval, merging what is noted meanwhile (highest offset per partition)", async () => {
    const journal: string[] = [];
    const consumer = new FakeConsumer(journal);
    const c = committer();
    c.note(consumer, [{ topic: "t", partition: 0, offset: 3 }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(journal).toEqual(["commit 0@3"]);
    c.note(consumer, [{ topic: "t", partition: 0, offset: 5 }]);
    c.note(consumer, [
      { topic: "t", partition: 0, offset: 4 },
      { topic: "t", partition: 1, offset: 9 },
    ]);
    await vi.advanceTimersByTimeAsync(199);
    expect(journal).toEqual(["commit 0@3"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(journal).toEqual(["commit 0@3", "commit 0@5,1@9"]);
  });

  it("keeps one commit in flight", async () => {
    const journal: string[] = [];
    const consumer = new FakeConsumer(journal);
    let release = () => {};
    consumer.commit.mockImplementationOnce(async () => {
      await new Promise<void>((r) => {
        release = r;
      });
    });
    const c = committer();
    c.note(consumer, [{ topic: "t", partition: 0, offset: 3 }]);
    await vi.advanceTimersByTimeAsync(1_000);
    c.note(consumer, [{ topic: "t", partition: 0, offset: 4 }]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(consumer.commit).toHaveBeenCalledTimes(1);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(consumer.commit).toHaveBeenCalledTimes(2);
  });

  it("idle() commits what waits for the interval at once (a closing indexer leaves its offsets committed)", async () => {
    const journal: string[] = [];
    const consumer = new FakeConsumer(journal);
    const c = committer();
    c.note(consumer, [{ topic: "t", partition: 0, offset: 3 }]);
    c.note(consumer, [{ topic: "t", partition: 0, offset: 4 }]);
    await c.idle();
    expect(journal).toEqual(["commit 0@3", "commit 0@4"]);
  });

  it("a failed commit is dropped (the ledger holds the positions) and later ones still go out", async () => {
    const consumer = new FakeConsumer([]);
    consumer.commit.mockRejectedValueOnce(new Error("The group is rebalancing"));
    const c = committer();
    c.note(consumer, [{ topic: "t", partition: 0, offset: 3 }]);
    await c.idle();
    c.note(consumer, [{ topic: "t", partition: 0, offset: 4 }]);
    await c.idle();
    expect(consumer.commit).toHaveBeenCalledTimes(2);
    expect(consumer.commit).toHaveBeenLastCalledWith([{ topic: "t", partition: 0, offset: 4 }]);
  });
});
