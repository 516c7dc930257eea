import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { replaceWhenSilent, type WatchedRedis } from "./redis-silence.ts";

const logger = { warn: vi.fn(), info: vi.fn(), debug: vi.fn(), error: vi.fn() } as never;

/** A connection whose PINGs are answered or not, as the test says. */
class FakeRedis implements WatchedRedis {
  status = "ready";
  answering = true;
  pings = 0;
  reconnects = 0;
  private pending: (() => void)[] = [];
  private ended?: () => void;
  ping(): Promise<unknown> {
    this.pings++;
    if (this.answering) return Promise.resolve("PONG");
    return new Promise((resolve) => this.pending.push(() => resolve("PONG")));
  }
  disconnect(reconnect?: boolean): void {
    if (reconnect) this.reconnects++;
    // Without resending, ioredis drops what was in flight: those PINGs never settle.
    this.pending = [];
  }
  once(_event: "end", listener: () => void): unknown {
    this.ended = listener;
    return this;
  }
  end(): void {
    this.ended?.();
  }
}

describe("replaceWhenSilent", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("leaves a connection that answers alone", async () => {
    const r = new FakeRedis();
    replaceWhenSilent(r, logger, 1_000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(r.pings).toBe(10);
    expect(r.reconnects).toBe(0);
  });

  it("replaces the socket once a PING goes unanswered for the limit, and only once per silence", async () => {
    const r = new FakeRedis();
    replaceWhenSilent(r, logger, 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    r.answering = false;
    await vi.advanceTimersByTimeAsync(1_000); // the PING goes out
    expect(r.reconnects).toBe(0);
    await vi.advanceTimersByTimeAsync(999);
    expect(r.reconnects).toBe(0);
    r.status = "connecting";
    await vi.advanceTimersByTimeAsync(1);
    expect(r.reconnects).toBe(1);
    // While it reconnects nothing is pinged or replaced again.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.reconnects).toBe(1);
    // Ready again (the dropped PING never settled): watched again, and replaced again when silent.
    r.status = "ready";
    r.answering = true;
    const before = r.pings;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(r.pings).toBeGreaterThan(before);
    r.answering = false;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(r.reconnects).toBe(2);
  });

  it("does not ping a connection that is not ready", async () => {
    const r = new FakeRedis();
    r.status = "reconnecting";
    replaceWhenSilent(r, logger, 1_000);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.pings).toBe(0);
  });

  it("stops when the connection ends for good", async () => {
    const r = new FakeRedis();
    replaceWhenSilent(r, logger, 1_000);
    await vi.advanceTimersByTimeAsync(2_000);
    r.end();
    const before = r.pings;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(r.pings).toBe(before);
  });
});
