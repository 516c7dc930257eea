import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { type MessageSubscriber, ReceiptWaiter } from "./receipt-waiter.ts";

/** A pub/sub connection in memory: `deliver` plays a message arriving on a channel. */
class FakeSubscriber implements MessageSubscriber {
  readonly channels = new Set<string>();
  private listener: ((channel: string, message: string) => void) | undefined;
  private onReady: (() => void) | undefined;
  on(event: "message" | "ready", listener: ((channel: string, message: string) => void) | (() => void)): this {
    if (event === "ready") this.onReady = listener as () => void;
    else this.listener = listener as (channel: string, message: string) => void;
    return this;
  }
  /** The connection came back (a reconnect). */
  ready(): void {
    this.onReady?.();
  }
  async subscribe(channel: string): Promise<void> {
    this.channels.add(channel);
  }
  async unsubscribe(channel: string): Promise<void> {
    this.channels.delete(channel);
  }
  deliver(channel: string, message: string): void {
    if (this.channels.has(channel)) this.listener?.(channel, message);
  }
}

const CHANNEL = "evb:receipt:gw-1";
const receipt = (requestId: string, height = 3) => ({ requestId, eventId: `e-${requestId}`, height });

let sub: FakeSubscriber;
let waiter: ReceiptWaiter;

beforeEach(async () => {
  vi.useFakeTimers();
  sub = new FakeSubscriber();
  waiter = new ReceiptWaiter({ subscriber: sub, channel: CHANNEL, logger: silentLogger });
  await waiter.start();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("ReceiptWaiter", () => {
  it("resolves each waiter with its own receipt from a batch message, and forgets it", async () => {
    const a = waiter.expect("a", 1_000);
    const b = waiter.expect("b", 1_000);
    expect(waiter.waiting).toBe(2);
    sub.deliver(CHANNEL, JSON.stringify([receipt("b"), receipt("a", 4)]));
    await expect(a.receipt).resolves.toEqual(receipt("a", 4));
    await expect(b.receipt).resolves.toEqual(receipt("b"));
    expect(waiter.waiting).toBe(0);
  });

  it("takes a single receipt that is not in an array", async () => {
    const a = waiter.expect("a", 1_000);
    sub.deliver(CHANNEL, JSON.stringify(receipt("a")));
    await expect(a.receipt).resolves.toEqual(receipt("a"));
  });

  it("resolves null once the timeout passes, and not before", async () => {
    const a = waiter.expect("a", 1_000);
    let settled = false;
    void a.receipt.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(a.receipt).resolves.toBeNull();
    expect(waiter.waiting).toBe(0);
    // A receipt after the timeout changes nothing.
    sub.deliver(CHANNEL, JSON.stringify([receipt("a")]));
    await expect(a.receipt).resolves.toBeNull();
  });

  it("ignores messages that are not JSON, entries that are not receipts, and receipts nobody waits for", async () => {
    const a = waiter.expect("a", 1_000);
    sub.deliver(CHANNEL, "not json{");
    sub.deliver(CHANNEL, JSON.stringify([{ requestId: "a" }, 42, receipt("zzz")]));
    expect(waiter.waiting).toBe(1);
    sub.deliver(CHANNEL, JSON.stringify([receipt("a")]));
    await expect(a.receipt).resolves.toEqual(receipt("a"));
  });

  it("cancel drops the waiter, so a late receipt finds nobody", async () => {
    const a = waiter.expect("a", 1_000);
    a.cancel();
    expect(waiter.waiting).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("listens on its own channel only and leaves it on close", async () => {
    expect([...sub.channels]).toEqual([CHANNEL]);
    await waiter.close();
    expect(sub.channels.size).toBe(0);
  });
});

describe("progress", () => {
  it("tells how many publishes wait, how long the oldest has, and how long since a receipt answered one", async () => {
    expect(waiter.progress()).toMatchObject({ waiting: 0, oldestMs: 0 });
    waiter.expect("a", 30_000);
    await vi.advanceTimersByTimeAsync(2_000);
    waiter.expect("b", 30_000);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(waiter.progress()).toEqual({ waiting: 2, oldestMs: 6_000, sinceReceiptMs: 6_000 });
    sub.deliver(CHANNEL, JSON.stringify(receipt("a")));
    expect(waiter.progress()).toEqual({ waiting: 1, oldestMs: 4_000, sinceReceiptMs: 0 });
  });

  it("starts the no-receipt clock again when the channel comes back (receipts sent while it was down are lost)", async () => {
    waiter.expect("a", 60_000);
    await vi.advanceTimersByTimeAsync(27_000);
    expect(waiter.progress()).toEqual({ waiting: 1, oldestMs: 27_000, sinceReceiptMs: 27_000 });
    sub.ready();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(waiter.progress()).toEqual({ waiting: 1, oldestMs: 28_000, sinceReceiptMs: 1_000 });
  });
});
