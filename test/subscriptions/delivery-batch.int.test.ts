import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Index, LIMITS, StoreFixture } from "./store-fixture.ts";

// Crash survived: none (store semantics of recording several deliveries at once; the notifier
// SIGKILL mid-batch is notifier-crash.int.test.ts).
describe("recording a batch of deliveries", () => {
  let f: StoreFixture;

  beforeAll(async () => {
    f = await StoreFixture.open();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("removes exactly the recorded rows, moves the cursor to the last, counts each event once, and only under the lease", async () => {
    const id = randomUUID();
    expect((await f.subs.subscribe(f.request(id, "batch/a"))).kind).toBe("created");
    await f.seal("batch/a", "batch/a", "batch/a");
    await f.seal("batch/a", "batch/a");
    await f.dispatchAll(new Index(), LIMITS);
    const items = await f.deliveries.backlog(id, 10);
    expect(items).toHaveLength(5);
    const at = (n: number) => items.slice(0, n).map((i) => ({ height: i.height, idx: i.idx }));

    const stale = await f.lease(id);
    const token = await f.lease(id);
    // A worker whose lease was taken over records nothing, however many events it carries.
    expect(await f.deliveries.deliveredBatch({ id, token: stale, events: at(3), now: 1, leaseMs: 0 })).toBeNull();
    expect(await f.counts(id)).toEqual({ pending: 5, backlog: 5, delivered: 0 });

    expect(await f.deliveries.deliveredBatch({ id, token, events: at(3), now: 2, leaseMs: 0 })).toMatchObject({
      delivered: 3,
      pending: 2,
      notifiedAt: 2,
    });
    // The rows behind the last recorded one stay, in order: the next batch starts there.
    expect((await f.deliveries.backlog(id, 10)).map((i) => i.eventId)).toEqual(items.slice(3).map((i) => i.eventId));
    const cursor = await f.pool.query("SELECT delivered_height AS h, delivered_idx AS i FROM subscriptions WHERE id = $1", [id]);
    expect(cursor.rows[0]).toEqual({ h: items[2]?.height, i: items[2]?.idx });

    // A batch overlapping what was already recorded (re-sent after a crash) counts only the new rows.
    expect(await f.deliveries.deliveredBatch({ id, token, events: at(5), now: 3, leaseMs: 0 })).toMatchObject({
      delivered: 5,
      pending: 0,
    });
    expect(await f.counts(id)).toEqual({ pending: 0, backlog: 0, delivered: 5 });
  });
});
