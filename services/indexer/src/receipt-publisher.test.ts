import { silentLogger, type SealedBlock } from "@evb/domain";
import { describe, expect, it } from "vitest";
import { HOLD_MS, MAX_HELD, type ReceiptRedis, RedisReceipts } from "./receipt-publisher.ts";

/** A Redis connection whose readiness and answers the test sets; it records what was published. */
class FakeRedis implements ReceiptRedis {
  status = "ready";
  fail = false;
  readonly published: { channel: string; message: string }[] = [];
  private readyListeners: (() => void)[] = [];
  pipeline() {
    const batch: { channel: string; message: string }[] = [];
    return {
      publish: (channel: string, message: string) => batch.push({ channel, message }),
      exec: async () => {
        if (this.fail) throw new Error("Connection is closed");
        this.published.push(...batch);
      },
    };
  }
  on(_event: "ready", listener: () => void) {
    this.readyListeners.push(listener);
    return this;
  }
  back(): void {
    this.status = "ready";
    this.fail = false;
    for (const l of this.readyListeners) l();
  }
}

function block(height: number, requestIds: string[]): SealedBlock {
  return {
    groupId: "1",
    height,
    hash: `h${height}`,
    prevHash: `h${height - 1}`,
    timestampMs: 0,
    sealer: "0x0",
    sealerIndex: 0,
    ranges: [],
    events: requestIds.map((requestId, i) => ({ eventId: `e-${height}-${i}`, record: { gatewayId: "gw-a", requestId } }) as never),
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const receiptsIn = (r: FakeRedis) =>
  r.published
    .filter((m) => m.channel.includes("gw-a"))
    .flatMap((m) => (JSON.parse(m.message) as { requestId: string }[]).map((x) => x.requestId));

describe("RedisReceipts", () => {
  it("sends a block's receipts and nudge at once while Redis is ready", async () => {
    const redis = new FakeRedis();
    const receipts = new RedisReceipts(redis, "evb", silentLogger);
    receipts.announce(block(1, ["a", "b"]));
    await settle();
    expect(receiptsIn(redis)).toEqual(["a", "b"]);
    expect(redis.published).toHaveLength(2);
  });

  it("holds what was sealed while Redis was away and sends it when Redis is ready again", async () => {
    const redis = new FakeRedis();
    const receipts = new RedisReceipts(redis, "evb", silentLogger);
    redis.status = "reconnecting";
    receipts.announce(block(1, ["a"]));
    receipts.answer([{ requestId: "k", gatewayId: "gw-a", outcome: "duplicate", eventId: "x-1-1" }]);
    await settle();
    expect(redis.published).toHaveLength(0);
    redis.back();
    await settle();
    expect(receiptsIn(redis)).toEqual(["a", "k"]);
    expect(redis.published).toHaveLength(3);
    // Sent once: nothing is left held for the next return.
    redis.back();
    await settle();
    expect(redis.published).toHaveLength(3);
  });

  it("holds a send that failed on a connection still called ready, and sends it with the next that works", async () => {
    const redis = new FakeRedis();
    const receipts = new RedisReceipts(redis, "evb", silentLogger);
    redis.fail = true;
    receipts.announce(block(1, ["a"]));
    await settle();
    expect(redis.published).toHaveLength(0);
    redis.fail = false;
    receipts.announce(block(2, ["b"]));
    await settle();
    await settle();
    expect(receiptsIn(redis).sort()).toEqual(["a", "b"]);
  });

  it("drops what is older than the hold, and keeps at most MAX_HELD messages", async () => {
    const redis = new FakeRedis();
    let now = 0;
    const receipts = new RedisReceipts(redis, "evb", silentLogger, () => now);
    redis.status = "connecting";
    receipts.announce(block(1, ["old"]));
    now = HOLD_MS + 1;
    receipts.announce(block(2, ["new"]));
    for (let i = 0; i < MAX_HELD; i++) receipts.answer([{ requestId: `k${i}`, gatewayId: "gw-b", outcome: "duplicate", eventId: "x-1-1" }]);
    redis.back();
    await settle();
    // "old" is past the hold and "new" was pushed out by the newer answers.
    expect(receiptsIn(redis)).toEqual([]);
    expect(redis.published).toHaveLength(MAX_HELD);
  });
});
