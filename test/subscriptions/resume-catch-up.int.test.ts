import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Index, StoreFixture } from "./store-fixture.ts";

// Crash survived: none. Resuming a subscription must not make subscribe (and the group's
// dispatch, which waits for the same lock) pay for everything the subscription missed.
describe("resuming a subscription holds the group's dispatch lock for a long time", () => {
  let f: StoreFixture;
  beforeAll(async () => {
    f = await StoreFixture.open();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("subscribe only records the refill; the refill runs in bounded pages beside dispatch, and order and counters hold", async () => {
    const exact = randomUUID();
    const pattern = randomUUID();
    await f.subs.subscribe(f.request(exact, "rc/a"));
    await f.subs.subscribe(f.request(pattern, "rc/+"));
    const index = new Index();
    await f.seal("rc/a", "rc/b");
    await f.dispatchAll(index);
    for (const id of [exact, pattern]) {
      const [head] = await f.deliveries.backlog(id, 1);
      await f.deliver(id, head as { height: number; idx: number });
      await f.subs.unsubscribe(id);
    }
    // Missed while away: 3 blocks of 40 events, half of them matching rc/a, a third rc/b.
    const topics = Array.from({ length: 40 }, (_, i) => ["rc/a", "rc/b", "rc/a", "other", "rc/a", "rc/b"][i % 6] as string);
    for (let b = 0; b < 3; b++) await f.seal(...topics);
    await f.dispatchAll(index);

    for (const id of [exact, pattern]) {
      const out = await f.subs.subscribe(f.request(id, id === exact ? "rc/a" : "rc/+"));
      // Before: the whole refill ran inside subscribe's transaction, under the group's lock.
      expect(out).toMatchObject({ kind: "resumed", row: { catchingUp: true, pending: 0 } });
      expect(await f.counts(id)).toMatchObject({ backlog: 0 });
    }
    // Published after the resume: the dispatcher goes on meanwhile, refill or not.
    await f.seal("rc/a", "rc/b");
    expect((await f.dispatchAll(index)).length).toBeGreaterThan(0);

    const exactPages = await f.catchUpAll(exact, 25);
    const patternPages = await f.catchUpAll(pattern, 25);
    expect(Math.max(...exactPages, ...patternPages)).toBeLessThanOrEqual(25);
    expect(exactPages.length).toBeGreaterThan(2);
    expect(patternPages.length).toBeGreaterThan(4);

    for (const [id, match] of [
      [exact, ["rc/a"]],
      [pattern, ["rc/a", "rc/b"]],
    ] as const) {
      const want = (
        await f.pool.query(
          `SELECT e.height, e.idx FROM events e, subscriptions s WHERE s.id = $1 AND e.topic = ANY($2::text[])
             AND (e.height, e.idx) > (s.delivered_height, s.delivered_idx) ORDER BY e.height, e.idx`,
          [id, match],
        )
      ).rows.map((e) => [e.height, e.idx]);
      expect((await f.deliveries.backlog(id, 1000)).map((b) => [b.height, b.idx])).toEqual(want);
      expect(await f.counts(id)).toEqual({ pending: want.length, backlog: want.length, delivered: 1 });
      expect((await f.subs.get(id))?.catchingUp).toBe(false);
    }
  });
});
