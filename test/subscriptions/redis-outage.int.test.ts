import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Receiver } from "../support/receiver.ts";
import { TcpRelay } from "../support/tcp-relay.ts";
import { TestSystem } from "../support/system.ts";
import { E, M, openTopic } from "./helpers.ts";

/** One request with its own bound: a hang fails the test here instead of at the suite timeout. */
async function request(base: string, path: string, params: Record<string, string>, method: "GET" | "POST" = "GET") {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(method === "GET" ? `${base}${path}?${qs}` : `${base}${path}`, {
    method,
    signal: AbortSignal.timeout(10_000),
    ...(method === "POST" ? { body: qs, headers: { "content-type": "application/x-www-form-urlencoded" } } : {}),
  });
  return { status: res.status, text: await res.text() };
}

// Crash survived: Redis down or hung while the gateway serves subscription requests. Postgres
// holds the subscriptions and their counters; Redis only caches the counters and carries wake-up
// hints. Before, these requests waited on Redis: they hung (commands queued while Redis was away)
// or, once Redis commands failed fast, answered 200203 although the change was committed.
describe("Redis outage hangs HTTP requests", () => {
  let relay: TcpRelay;
  let sys: TestSystem;
  let rx: Receiver;

  beforeAll(async () => {
    relay = TcpRelay.for(inject("redisUrl"), 6379);
    await relay.start();
    sys = await TestSystem.start({ env: { REDIS_URL: `redis://127.0.0.1:${relay.port}`, CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8" } });
    rx = await Receiver.start();
    await openTopic(sys.gatewayUrl, "outage/a");
  });
  afterAll(async () => {
    relay?.up();
    await rx?.close();
    await sys?.stop();
    relay?.close();
  });

  it.each(["down", "stalled"] as const)("subscribe, listSubscription, continuing and unSubscribe answer while Redis is %s", async (how) => {
    if (how === "down") relay.down();
    else relay.stall();
    const sub = await request(sys.gatewayUrl, `${M}/rest/subscribe`, { topic: "outage/a", url: rx.url() }, "POST");
    expect(sub.text).toMatch(/^[0-9a-f-]{36}$/);
    const id = sub.text;

    const list = JSON.parse((await request(sys.gatewayUrl, `${E}/admin/listSubscription`, {})).text) as Record<
      string,
      Record<string, Record<string, string>>
    >;
    const mine = Object.values(list).find((node) => node[id]);
    expect(mine?.[id]).toMatchObject({ subscribeId: id, topicName: "outage/a", notifiedEventCount: "0", notifyingEventCount: "0" });

    // Continuing a live id publishes its counters and wakes the notifiers: both need Redis.
    expect(
      (await request(sys.gatewayUrl, `${M}/rest/subscribe`, { topic: "outage/a", url: rx.url("/2"), subscriptionId: id }, "POST")).text,
    ).toBe(id);
    const unsub = await request(sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: id }, "POST");
    expect(unsub.status).toBe(200);
    expect(JSON.parse(unsub.text)).toBe(true);
    relay.up();
  });
});
