import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEFAULT_SETTINGS, type SubscriptionSettings } from "@evb/domain";
import { FakeLedger, FakeReceiver, fail, item, runSlice, slicer } from "../../../../test/support/delivery-fakes.ts";
import type { DeliveryLimits } from "./delivery-step.ts";
import { CallbackPacer, ownSettings } from "./own-settings.ts";

// Crash survived: none (the slice's use of a subscription's own settings behind fakes; on real
// infrastructure: test/subscriptions/subscription-settings.int.test.ts).

const LIMITS: DeliveryLimits = {
  retry: { baseMs: 1000, maxMs: 60_000, maxAttempts: 3, retryAfterMaxMs: 30_000 },
  disableAfterMs: 86_400_000,
  recordEvents: 3,
  recordMs: 200,
  sliceEvents: 100,
  window: 4,
};

const source = (s: Partial<SubscriptionSettings>) => ({ get: async () => ({ ...DEFAULT_SETTINGS, ...s }) });

describe("ownSettings", () => {
  it("the deployment's limits when nothing is set", () => {
    expect(ownSettings(DEFAULT_SETTINGS, LIMITS, 0)).toEqual({ paused: false, limits: LIMITS, keys: null, spacingMs: 0 });
  });

  it("the subscription's retry schedule, window, rate and keys replace the deployment's", () => {
    const own = ownSettings(
      {
        ...DEFAULT_SETTINGS,
        retryMaxAttempts: 7,
        retryBaseMs: 10,
        deliveryWindow: 1,
        maxRate: 20,
        secret: "whsec_bmV3",
        previousSecret: "whsec_b2xk",
        previousUntil: 5,
      },
      LIMITS,
      4,
    );
    expect(own.limits.retry).toEqual({ baseMs: 10, maxMs: 60_000, maxAttempts: 7, retryAfterMaxMs: 30_000 });
    expect(own.limits.window).toBe(1);
    expect(own.spacingMs).toBe(50);
    expect(own.keys?.map((k) => k.toString())).toEqual(["new", "old"]);
  });

  it("its custom headers go with its callbacks; none without them", () => {
    expect(ownSettings({ ...DEFAULT_SETTINGS, headers: '{"x-token":"t1"}' }, LIMITS, 0).headers).toEqual({ "x-token": "t1" });
    expect(ownSettings(DEFAULT_SETTINGS, LIMITS, 0).headers).toBeUndefined();
  });
});

describe("CallbackPacer", () => {
  it("spaces the starts of one subscription and forgets it when the limit goes", async () => {
    const p = new CallbackPacer();
    expect(p.waitMs("a", 100, 0)).toBe(0);
    p.started("a", 100, 1_000);
    expect(p.waitMs("a", 100, 1_040)).toBe(60);
    expect(p.waitMs("b", 100, 1_040)).toBe(0);
    const slept: number[] = [];
    const t = { now: () => 1_040, sleep: async (ms: number) => void slept.push(ms), sleepMaxMs: 1_000 };
    expect(await p.pace("a", 100, t)).toBeNull();
    expect(slept).toEqual([60]);
    expect(await p.pace("a", 5_000, t)).toBe(1_040 + 4_960);
    expect(p.waitMs("a", 0, 1_040)).toBe(0);
  });
});

describe("a slice under the subscription's own settings (fake ledger, receiver and timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a paused subscription sends nothing and keeps its backlog; resumed, it delivers it in order", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3].map(item);
    const rx = new FakeReceiver();
    expect(await runSlice(slicer(ledger, rx, { settings: source({ paused: true }) }))).toBe("idle");
    expect(rx.written).toEqual([]);
    expect(ledger.items).toHaveLength(3);
    expect(await runSlice(slicer(ledger, rx, { settings: source({ paused: false }) }))).toBe("drained");
    expect(rx.written).toEqual([1, 2, 3]);
  });

  it("its own retry budget decides when the head is dead-lettered, with its own backoff", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2].map(item);
    const rx = new FakeReceiver();
    rx.answer = () => fail(500, "SERVER_ERROR");
    const s = slicer(ledger, rx, { settings: source({ retryMaxAttempts: 1, retryBaseMs: 10 }) });
    expect(await runSlice(s)).toBe("dead");
    expect(ledger.failures).toHaveLength(1);
    const ledger2 = new FakeLedger();
    ledger2.items = [1].map(item);
    const end = await runSlice(slicer(ledger2, rx, { settings: source({ retryMaxAttempts: 5, retryBaseMs: 10, retryMaxMs: 10 }) }));
    // random() is 0: half the delay.
    expect(end).toEqual({ parkUntil: ledger2.failures[0]?.nextAttemptAt });
    expect((ledger2.failures[0]?.nextAttemptAt ?? 0) - Date.now()).toBeLessThanOrEqual(10);
  });

  it("its own secrets sign: the signer gets its keys, newest first", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1].map(item);
    const rx = new FakeReceiver();
    const keys: (string[] | null)[] = [];
    const signer = {
      headers: (_s: string, _e: string, _b: string, _n: number, _r?: number, k?: readonly Buffer[] | null) => {
        keys.push(k ? k.map((x) => x.toString()) : null);
        return {};
      },
    };
    const settings = source({ secret: "whsec_bmV3", previousSecret: "whsec_b2xk", previousUntil: Date.now() + 60_000 });
    await runSlice(slicer(ledger, rx, { signer, settings }));
    expect(keys).toEqual([["new", "old"]]);
  });

  it("a rate limit spaces the callbacks: each waits its spacing after the previous one started, in order", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3, 4].map(item);
    const rx = new FakeReceiver();
    const starts: number[] = [];
    const post = rx.post.bind(rx);
    rx.post = (...a) => {
      starts.push(Date.now());
      return post(...a);
    };
    expect(await runSlice(slicer(ledger, rx, { window: 4, settings: source({ maxRate: 10 }) }))).toBe("drained");
    expect(rx.written).toEqual([1, 2, 3, 4]);
    expect(
      starts
        .slice(1)
        .map((t, i) => t - (starts[i] ?? 0))
        .every((gap) => gap >= 100),
    ).toBe(true);
  });

  it("a rate limit whose wait is long parks the job instead of holding the slot", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2].map(item);
    const rx = new FakeReceiver();
    const s = slicer(ledger, rx, { settings: source({ maxRate: 0.1 }) });
    const end = await runSlice(s);
    expect(rx.written).toEqual([1]);
    expect(ledger.recordedHeights()).toEqual([1]);
    expect(end).toEqual({ parkUntil: expect.any(Number) });
  });
});
