import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryStore, OwnerAlertStore, SubscriptionSettingsStore } from "@evb/storage";
import { Index, LIMITS, StoreFixture } from "./store-fixture.ts";

// Crash survived: none here (the outbox is written with the transition; a notifier killed while
// sending is owner-alerts.int.test.ts). Store semantics of alerts to the owner: stored once per
// transition with the failed, dead and delivered writes, only under the lease, only with an alert
// URL; claimed oldest first per subscription.
describe("alerts to the owner in Postgres", () => {
  let f: StoreFixture;
  let deliveries: DeliveryStore;
  let outbox: OwnerAlertStore;
  let settings: SubscriptionSettingsStore;

  beforeAll(async () => {
    f = await StoreFixture.open();
    deliveries = new DeliveryStore(f.pool, { alertFailingAfter: 2 });
    outbox = new OwnerAlertStore(f.pool);
    settings = new SubscriptionSettingsStore(f.pool);
  });
  afterAll(async () => {
    await f?.close();
  });

  /** A live subscription of its own topic with one event in its backlog, and the alert URL given. */
  async function subscription(alertUrl: string | null) {
    const id = randomUUID();
    const topic = `alerts/${id}`;
    await f.subs.subscribe(f.request(id, topic));
    if (alertUrl) await settings.change(id, 1, (s) => ({ settings: { ...s, alertUrl } }));
    await f.seal(topic);
    await f.dispatchAll(new Index(), LIMITS);
    return id;
  }
  const fail = (id: string, token: number, attempts: number, deadAt: number | null = null) =>
    deliveries.failed(id, token, { attempts, nextAttemptAt: 0, error: `HTTP 500 #${attempts}`, deadAt });
  const stored = async (id: string) =>
    (await f.pool.query("SELECT type FROM owner_alerts WHERE subscription_id = $1 ORDER BY id", [id])).rows.map((r) => r.type);

  it("failing once at the threshold, suspended at the dead letter, recovered at the next delivery after a replay", async () => {
    const id = await subscription("http://127.0.0.1:1/alerts");
    const token = await f.lease(id);
    expect(await fail(id, token, 1)).toBe(true);
    expect(await stored(id)).toEqual([]);
    await fail(id, token, 2);
    await fail(id, token, 3);
    expect(await stored(id)).toEqual(["subscription.failing"]);
    await fail(id, token, 4, 1_000);
    expect(await stored(id)).toEqual(["subscription.failing", "subscription.suspended"]);

    expect(await f.subs.replay(id)).toEqual([id]);
    const [head] = await deliveries.backlog(id, 1);
    expect(await f.deliver(id, { height: head?.height ?? 0, idx: head?.idx ?? 0 })).not.toBeNull();
    expect(await stored(id)).toEqual(["subscription.failing", "subscription.suspended", "subscription.recovered"]);
    const r = await f.pool.query("SELECT count(*)::int AS n FROM subscription_alert_state WHERE subscription_id = $1", [id]);
    expect(r.rows[0].n).toBe(0);
  });

  it("a worker whose lease was taken over stores nothing; a subscription without an alert URL stores nothing", async () => {
    const id = await subscription("http://127.0.0.1:1/alerts");
    const stale = await f.lease(id);
    await f.lease(id);
    expect(await fail(id, stale, 5, 1_000)).toBe(false);
    expect(await stored(id)).toEqual([]);

    const quiet = await subscription(null);
    const token = await f.lease(quiet);
    await fail(quiet, token, 3);
    await fail(quiet, token, 4, 1_000);
    expect(await stored(quiet)).toEqual([]);
  });

  it("claims the oldest alert of each subscription only, with its URL and signing, until it is done", async () => {
    const id = await subscription("http://127.0.0.1:1/claimed");
    const token = await f.lease(id);
    await fail(id, token, 2);
    await fail(id, token, 3, 1_000);
    const mine = async (now: number) => (await outbox.claim(now, 100, 10_000)).filter((a) => a.subscriptionId === id);
    const [first] = await mine(Date.now());
    expect(first).toMatchObject({ type: "subscription.failing", url: "http://127.0.0.1:1/claimed", attempts: 1, consecutiveFailures: 2 });
    expect(first?.signing).toEqual({ secret: null, previousSecret: null, previousUntil: null });
    // Claimed: not handed out again before the claim runs out, and the next alert waits behind it.
    expect(await mine(Date.now())).toEqual([]);
    await outbox.done(first?.id ?? 0);
    const [second] = await mine(Date.now());
    expect(second).toMatchObject({ type: "subscription.suspended", attempts: 1 });
    await outbox.retryAt(second?.id ?? 0, 0);
    expect((await mine(Date.now()))[0]).toMatchObject({ id: second?.id, attempts: 2 });
  });
});
