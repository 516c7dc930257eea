import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Index, LIMITS, StoreFixture } from "./store-fixture.ts";

// Crash survived: none (store semantics: cursor, backlog, resume, dead letters).
describe("subscription and delivery stores", () => {
  let f: StoreFixture;

  beforeAll(async () => {
    f = await StoreFixture.open();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("a new subscription gets only events sealed after it, in order, and resumes after its last delivery", async () => {
    await f.seal("a/x");
    const id = randomUUID();
    const pat = randomUUID();
    expect((await f.subs.subscribe(f.request(id, "a/x"))).kind).toBe("created");
    expect((await f.subs.subscribe(f.request(pat, "a/+"))).kind).toBe("created");
    await f.seal("a/x", "b", "a/y");
    await f.seal("a/x");
    const index = new Index();
    const run = await f.dispatches.dispatch("1", index, LIMITS);
    expect(run?.events).toBe(4);
    expect(await f.dispatches.dispatch("1", index, LIMITS)).toBeNull();
    const items = await f.deliveries.backlog(id, 10);
    expect(items.map((i) => i.topic)).toEqual(["a/x", "a/x"]);
    expect((await f.deliveries.backlog(pat, 10)).map((i) => i.topic)).toEqual(["a/x", "a/y", "a/x"]);

    const first = items[0] as (typeof items)[number];
    const token = await f.lease(id);
    const stats = await f.deliveries.deliveredBatch({ id, token, events: [first], now: 1234, leaseMs: 0 });
    expect(stats).toMatchObject({ delivered: 1, pending: 1, notifiedAt: 1234 });
    // Delivering the same event twice (a retry after a crash) counts it once.
    expect(await f.deliveries.deliveredBatch({ id, token, events: [first], now: 1235, leaseMs: 0 })).toMatchObject({
      delivered: 1,
      pending: 1,
    });

    expect((await f.subs.unsubscribe(id))?.active).toBe(false);
    expect(await f.subs.unsubscribe(id)).toBeNull();
    await f.seal("a/x");
    await f.dispatches.dispatch("1", index, LIMITS);
    const resumed = await f.subs.subscribe(f.request(id, "a/x"));
    expect(resumed).toMatchObject({ kind: "resumed", row: { catchingUp: true } });
    await f.catchUpAll(id);
    const again = await f.deliveries.backlog(id, 10);
    expect(again.map((i) => [i.height, i.idx])).toEqual([
      [items[1]?.height, items[1]?.idx],
      [again[1]?.height, again[1]?.idx],
    ]);
    await f.seal("a/x");
    await f.dispatches.dispatch("1", index, LIMITS);
    expect(await f.deliveries.backlog(id, 10)).toHaveLength(3);
  });

  it("a live id continued with another topic is a mismatch; the same topic switches the URL and releases a dead letter", async () => {
    const id = randomUUID();
    await f.subs.subscribe(f.request(id, "m"));
    expect((await f.subs.subscribe(f.request(id, "other"))).kind).toBe("mismatch");
    await f.deliveries.failed(id, await f.lease(id), { attempts: 3, nextAttemptAt: 0, error: "HTTP 500", deadAt: Date.now() });
    expect((await f.subs.deadLettered("1")).map((r) => r.id)).toContain(id);
    const cont = await f.subs.subscribe({ ...f.request(id, "m"), url: "http://127.0.0.1:2/new" });
    expect(cont.kind).toBe("continued");
    expect("row" in cont && cont.row).toMatchObject({ url: "http://127.0.0.1:2/new", deadAt: null, attempts: 0 });
    await f.deliveries.failed(id, await f.lease(id), { attempts: 3, nextAttemptAt: 0, error: "HTTP 500", deadAt: Date.now() });
    expect(await f.subs.replay(id)).toEqual([id]);
    expect(await f.subs.deadLettered("1")).toEqual([]);
  });
});
