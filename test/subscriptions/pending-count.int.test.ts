import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Index, StoreFixture } from "./store-fixture.ts";

// Crash survived: none. notifyingEventCount (pending_count) must equal the backlog it counts.
describe("pending_count", () => {
  let f: StoreFixture;
  beforeAll(async () => {
    f = await StoreFixture.open();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("pending_count drifts: a backlog row dispatch finds already there is not counted twice", async () => {
    const id = randomUUID();
    await f.subs.subscribe(f.request(id, "pc/a"));
    await f.seal("pc/a", "pc/a");
    const event = (await f.pool.query("SELECT height, idx FROM events WHERE topic = 'pc/a' ORDER BY height, idx LIMIT 1")).rows[0];
    // A row the dispatcher will also match (left by an earlier run, a refill, a hand repair),
    // counted when it was put there.
    await f.pool.query("INSERT INTO subscription_backlog (subscription_id, height, idx) VALUES ($1, $2, $3)", [
      id,
      event.height,
      event.idx,
    ]);
    await f.pool.query("UPDATE subscriptions SET pending_count = 1 WHERE id = $1", [id]);
    const index = new Index();
    await f.dispatchAll(index);
    expect(await f.counts(id)).toEqual({ pending: 2, backlog: 2, delivered: 0 });
    for (const item of await f.deliveries.backlog(id, 10)) await f.deliver(id, item);
    expect(await f.counts(id)).toEqual({ pending: 0, backlog: 0, delivered: 2 });
  });

  it("pending_count drifts: a delivery recorded for an inactive subscription removes nothing behind the counters", async () => {
    const id = randomUUID();
    await f.subs.subscribe(f.request(id, "pc/b"));
    await f.seal("pc/b");
    const index = new Index();
    await f.dispatchAll(index);
    const head = (await f.deliveries.backlog(id, 1))[0] as { height: number; idx: number };
    // The row as a racing change may leave it for an instant: inactive, backlog not yet dropped,
    // while a slice that leased it before still delivers.
    const token = await f.lease(id);
    await f.pool.query("UPDATE subscriptions SET active = false WHERE id = $1", [id]);
    expect(await f.deliver(id, head, token)).toBeNull();
    await f.pool.query("UPDATE subscriptions SET active = true WHERE id = $1", [id]);
    expect(await f.counts(id)).toEqual({ pending: 1, backlog: 1, delivered: 0 });
  });
});
