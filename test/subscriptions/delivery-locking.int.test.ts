import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Index, StoreFixture } from "./store-fixture.ts";

// Crash survived: none. Races between the gateway's subscription changes and the notifier's
// delivery records, on real Postgres row locks.
describe("subscription changes racing deliveries", () => {
  let f: StoreFixture;
  beforeAll(async () => {
    f = await StoreFixture.open(16);
  });
  afterAll(async () => {
    await f?.close();
  });

  it("unSubscribe during a delivery deadlocks: concurrent unSubscribe/resume and delivery loops never deadlock or lose a record", async () => {
    // delivered() used to lock the backlog row and then the subscription, while unSubscribe and
    // subscribe lock the subscription and then its backlog: Postgres aborted one of them with
    // "deadlock detected", failing the unSubscribe request or the delivery record.
    const ids = Array.from({ length: 6 }, () => randomUUID());
    for (const id of ids) await f.subs.subscribe(f.request(id, "dl/a"));
    for (let b = 0; b < 6; b++) await f.seal(...Array.from({ length: 8 }, () => "dl/a"));
    const index = new Index();
    await f.dispatchAll(index);

    const errors: string[] = [];
    const recorded = new Map<string, [number, number]>();
    let churning = ids.length;
    const deliver = async (id: string) => {
      for (let i = 0; i < 400 && churning > 0; i++) {
        try {
          // As a delivery slice does: refill a resumed subscription page by page, then deliver.
          const token = await f.tryLease(id);
          if (token === null) continue;
          await f.deliveries.catchUp(id, token, 0, 5);
          const head = (await f.deliveries.backlog(id, 1))[0];
          if (!head) continue;
          const stats = await f.deliver(id, head, token);
          if (stats) recorded.set(id, [head.height, head.idx]);
        } catch (err) {
          errors.push(`delivered: ${(err as Error).message}`);
        }
      }
    };
    const churn = async (id: string) => {
      for (let i = 0; i < 25; i++) {
        try {
          await f.subs.unsubscribe(id);
          await f.subs.subscribe(f.request(id, "dl/a"));
        } catch (err) {
          errors.push(`unsubscribe/subscribe: ${(err as Error).message}`);
        }
      }
      churning -= 1;
    };
    await Promise.all(ids.flatMap((id) => [deliver(id), churn(id)]));
    expect(errors).toEqual([]);

    for (const id of ids) {
      await f.catchUpAll(id);
      const row = (await f.pool.query("SELECT delivered_height AS h, delivered_idx AS i FROM subscriptions WHERE id = $1", [id])).rows[0];
      const last = recorded.get(id);
      // Every recorded delivery moved the cursor (none was rolled back or lost).
      if (last) expect(row.h > last[0] || (row.h === last[0] && row.i >= last[1]), `cursor of ${id}`).toBe(true);
      const behind = await f.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM events WHERE group_id = '1' AND topic = 'dl/a' AND (height, idx) <= ($1, $2)",
        [row.h, row.i],
      );
      const c = await f.counts(id);
      // Each event up to the cursor was counted exactly once; the rest waits in the backlog.
      expect(c.delivered).toBe(behind.rows[0]?.n);
      expect(c.pending).toBe(c.backlog);
      expect(c.delivered + c.backlog).toBe(48);
    }
  });
});
