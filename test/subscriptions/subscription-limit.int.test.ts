import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callFrom } from "../support/http-from.ts";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { E, M, openTopic } from "./helpers.ts";

const ONE = "127.0.0.1";
const TWO = "127.0.0.2";

// Crash survived: none; a hostile caller creating subscriptions without end (issue 18, F10):
// nothing capped them, and one listSubscription over ~1,500 of them held the loop 273 ms. Keys
// off, so the caller is its address: two callers on two loopback addresses.
describe("MAX_SUBSCRIPTIONS_PER_CALLER", () => {
  let sys: TestSystem;
  let rx: Receiver;
  const sub = (from: string, params: Record<string, string>, mount = M) =>
    callFrom(from, sys.gatewayUrl, `${mount}/rest/subscribe`, params);

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", MAX_SUBSCRIPTIONS_PER_CALLER: "2" } });
    rx = await Receiver.start();
    await openTopic(sys.gatewayUrl, "capped");
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("refuses one more live subscription than the cap with 100510, per caller, and counts only live ones", async () => {
    const first = (await sub(ONE, { topic: "capped", url: rx.url() })).text;
    const second = (await sub(ONE, { topic: "capped", url: rx.url() }, E)).text;
    expect([first, second].every((id) => /^[0-9a-f-]{36}$/.test(id))).toBe(true);
    for (const mount of [M, E]) {
      const over = await sub(ONE, { topic: "capped", url: rx.url() }, mount);
      expect(over.json, over.text).toEqual({
        code: 100510,
        message: "subscriptions of this caller reach the limit; unsubscribe some first",
      });
    }
    // Continuing a live one adds nothing: still answered with its id.
    expect((await sub(ONE, { topic: "capped", url: rx.url(), subscriptionId: first })).text).toBe(first);
    // Another caller has a cap of its own.
    expect((await sub(TWO, { topic: "capped", url: rx.url() })).text).toMatch(/^[0-9a-f-]{36}$/);
    // An ended subscription frees its place, and resuming it counts again.
    expect((await callFrom(ONE, sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: second })).json).toBe(true);
    const third = (await sub(ONE, { topic: "capped", url: rx.url() })).text;
    expect(third).toMatch(/^[0-9a-f-]{36}$/);
    expect((await sub(ONE, { topic: "capped", url: rx.url(), subscriptionId: second })).json).toMatchObject({ code: 100510 });
  });
});
