import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { ChainTail } from "./chain-tail.ts";
import type { KafkaClient } from "./kafka-client.ts";

/** An admin client that answers an empty one-partition topic, or never answers at all (a silent broker behind it). */
function fakeAdmin(silent: boolean) {
  const never = () => new Promise<never>(() => {});
  return {
    metadata: vi.fn(async () => (silent ? never() : { topics: new Map([["p.chain.1", { partitionsCount: 1 }]]) })),
    listOffsets: vi.fn(async () => [{ partitions: [{ partitionIndex: 0, offset: 0n }] }]),
    close: vi.fn(async () => {}),
  };
}

describe("ChainTail.current", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it("replaces an admin client whose end-offset reading hangs and reads on a fresh one within the wait", async () => {
    const admins = [fakeAdmin(true), fakeAdmin(false)];
    let made = 0;
    const kafka = { admin: () => admins[made++] } as unknown as KafkaClient;
    const tail = new ChainTail({ kafka, topicPrefix: "p.", groups: ["1"], logger: silentLogger });
    const view = tail.current("1", 5_000);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(made).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(admins[0]?.close).toHaveBeenCalled();
    expect(await view).not.toBeNull();
    expect(made).toBe(2);
  });

  it("answers null (unknown) when no reading answers within the wait", async () => {
    const kafka = { admin: () => fakeAdmin(true) } as unknown as KafkaClient;
    const tail = new ChainTail({ kafka, topicPrefix: "p.", groups: ["1"], logger: silentLogger });
    const view = tail.current("1", 4_000);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(await view).toBeNull();
  });
});
