import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http.ts";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { M, openTopic, publishMany, subscribe } from "./helpers.ts";

// Crash survived: none. Fairness between subscriptions that share a notifier's delivery slots.
describe("a slow subscriber can still delay others", () => {
  let sys: TestSystem;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        // One slot, so the slow subscription and the healthy one compete for it.
        DELIVERY_CONCURRENCY: "1",
        DELIVERY_SLICE_EVENTS: "100",
        DELIVERY_SLICE_MS: "400",
        DELIVERY_TIMEOUT_MS: "2000",
        NOTIFIER_POLL_MS: "100",
      },
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await sys?.stop();
  });

  it("a receiver answering slowly but successfully yields the slot after DELIVERY_SLICE_MS", async () => {
    const slow = await Receiver.start();
    const fast = await Receiver.start();
    receivers.push(slow, fast);
    // Well inside the attempt timeout: every one of its callbacks succeeds, just slowly.
    slow.answer = () => ({ status: 200, delayMs: 200 });
    await openTopic(sys.gatewayUrl, "fair/slow");
    await openTopic(sys.gatewayUrl, "fair/fast");
    const s = await subscribe(sys.gatewayUrl, { topic: "fair/slow", url: slow.url() });
    const f = await subscribe(sys.gatewayUrl, { topic: "fair/fast", url: fast.url() });
    await publishMany(sys.gatewayUrl, "fair/slow", 20, 4);
    // The slow job holds the only slot now; then the healthy subscription gets events.
    await slow.until(() => slow.deliveredIds(s).length >= 1, "the slow subscription started");
    const ids = await publishMany(sys.gatewayUrl, "fair/fast", 5, 1);
    await fast.until(() => fast.deliveredIds(f).length >= 5, "the healthy subscription's callbacks");
    expect(fast.deliveredIds(f)).toEqual(ids);
    // Before: the slow job kept the slot for its whole slice of 100 events (all 20 here).
    expect(slow.deliveredIds(s).length).toBeLessThan(20);
    await slow.until(() => slow.deliveredIds(s).length >= 20, "the rest of the slow backlog");
    await call(sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: s });
  });
});
