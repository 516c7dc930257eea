import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeliveryAttempt, DeliveryAttemptStore } from "@evb/storage";
import { StoreFixture } from "./store-fixture.ts";

// Crash survived: none. The delivery-attempt log stays bounded (by age and by count per
// subscription), is written only under the slice's lease, and keeps any answer text.
describe("delivery-attempt log", () => {
  let f: StoreFixture;
  let log: DeliveryAttemptStore;
  const attempt = (eventId: string, at: number, extra: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
    eventId,
    at,
    durationMs: 4,
    status: 500,
    error: "HTTP 500",
    excerpt: null,
    ...extra,
  });
  beforeAll(async () => {
    f = await StoreFixture.open();
    log = new DeliveryAttemptStore(f.pool);
  });
  afterAll(async () => {
    await f?.close();
  });

  it("records attempts with the failure and the delivery records, only under the current lease", async () => {
    const id = "10000000-0000-4000-8000-000000000001";
    await f.subs.subscribe(f.request(id, "audit"));
    const token = await f.lease(id);
    expect(
      await f.deliveries.failed(id, token, {
        attempts: 1,
        nextAttemptAt: 0,
        error: "HTTP 500",
        deadAt: null,
        failingSince: 1_000,
        attempt: attempt("e-1", 1_000, { excerpt: "nul\u0000byte" }),
      }),
    ).toBe(true);
    // A stale token writes nothing, attempt included.
    expect(
      await f.deliveries.failed(id, token - 1, { attempts: 2, nextAttemptAt: 0, error: "x", deadAt: null, attempt: attempt("e-2", 2_000) }),
    ).toBe(false);
    const page = await log.page(id, 1, 10);
    expect(page.total).toBe(1);
    expect(page.attempts[0]).toEqual({
      eventId: "e-1",
      at: 1_000,
      durationMs: 4,
      status: 500,
      error: "HTTP 500",
      excerpt: "nul\uFFFDbyte",
    });
  });

  it("prunes attempts past their age and beyond the newest N of each subscription, in batches", async () => {
    const a = "10000000-0000-4000-8000-00000000000a";
    const b = "10000000-0000-4000-8000-00000000000b";
    const now = Date.now();
    // `n` log rows of 50 attempts each (one delivered batch), attempt i of row r named e-<r*50+i>.
    const rows = (id: string, n: number, at: number) =>
      f.pool.query(
        `INSERT INTO delivery_attempts (subscription_id, newest_at, attempt_count, event_ids, attempted_at, duration_ms, status, error, excerpt)
         SELECT $1, $2::bigint + r, 50, array_agg('e-' || (r * 50 + i) ORDER BY i), array_agg($2::bigint + r ORDER BY i),
           array_agg(1 ORDER BY i), array_agg(200 ORDER BY i), array_agg(NULL::text ORDER BY i), array_agg(NULL::text ORDER BY i)
         FROM generate_series(0, $3 - 1) r, generate_series(0, 49) i GROUP BY r ORDER BY r`,
        [id, at, n],
      );
    await rows(a, 240, now - 1000); // 12 000 recent attempts: only the count bound applies
    await rows(b, 140, now - 86_400_000); // a day old
    const deleted = await log.prune(now - 3_600_000, 100, [a]);
    // Rows, each a whole batch: a keeps the two newest (100 attempts); the first test's row (dated 1970) goes too.
    expect(deleted).toBe(238 + 140 + 1);
    const kept = await log.page(a, 1, 100);
    expect(kept.total).toBe(100);
    expect(kept.attempts[0]?.eventId).toBe("e-11999");
    expect(kept.attempts[99]?.eventId).toBe("e-11900");
    expect((await log.page(a, 2, 100)).attempts).toEqual([]);
    expect((await log.page(b, 1, 10)).total).toBe(0);
  });
});
