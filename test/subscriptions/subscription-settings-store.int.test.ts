import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, subscriptionStates } from "@evb/domain";
import { SubscriptionRecords, SubscriptionSettingsStore } from "@evb/storage";
import { StoreFixture } from "./store-fixture.ts";

// Crash survived: a lost ledger. A subscription's own settings (secrets included) travel in its
// Kafka record and come back with it when a rebuilt ledger restores the subscription.
describe("subscription settings in Postgres and in the subscription's record", () => {
  let f: StoreFixture;
  let store: SubscriptionSettingsStore;
  let records: SubscriptionRecords;
  beforeAll(async () => {
    f = await StoreFixture.open();
    store = new SubscriptionSettingsStore(f.pool);
    records = new SubscriptionRecords(f.pool);
  });
  afterAll(async () => {
    await f?.close();
  });

  it("a subscription never configured has the deployment's settings and a record without any", async () => {
    const id = "20000000-0000-4000-8000-000000000001";
    await f.subs.subscribe(f.request(id, "plain"));
    expect(await store.get(id)).toEqual(DEFAULT_SETTINGS);
    expect(await records.recordOf(id)).not.toHaveProperty("settings");
  });

  it("changes are serialised under the row's lock and the record carries them; a restore puts them back", async () => {
    const id = "20000000-0000-4000-8000-000000000002";
    await f.subs.subscribe(f.request(id, "configured"));
    const secret = (n: number) => `whsec_${Buffer.from(`k${n}`).toString("base64")}`;
    // Ten concurrent rotations: each one's previous secret is the one made just before it.
    let made = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        store.change(id, 1_000, (s) => {
          made++;
          return { settings: { ...s, previousSecret: s.secret, previousUntil: 2_000, secret: secret(made) } };
        }),
      ),
    );
    await store.change(id, 1_500, (s) => ({ settings: { ...s, paused: true, pausedAt: 1_500, maxRate: 4 } }));
    const now = await store.get(id);
    expect(now).toMatchObject({ secret: secret(10), previousSecret: secret(9), paused: true, maxRate: 4 });
    expect((await store.pausedOf([id, "20000000-0000-4000-8000-000000000001"])).has(id)).toBe(true);

    const record = await records.recordOf(id);
    expect(record?.settings).toEqual(now);
    // The ledger lost the subscription and its settings; its record brings both back.
    await f.pool.query("DELETE FROM subscription_settings WHERE subscription_id = $1", [id]);
    await f.pool.query("DELETE FROM subscriptions WHERE id = $1", [id]);
    const states = subscriptionStates([record as NonNullable<typeof record>], "1");
    expect(await records.restore("1", states)).toBe(1);
    expect(await store.get(id)).toEqual(now);
  });
});
