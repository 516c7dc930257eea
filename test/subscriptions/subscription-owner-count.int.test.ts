import { randomUUID } from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscriptionStore } from "@evb/storage";
import { StoreFixture } from "./store-fixture.ts";

interface PlanNode {
  "Node Type": string;
  "Actual Rows": number;
  "Actual Loops": number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

const LIVE = 20_000;

// Crash survived: none. Issue 29 item 7: each subscribe counted the caller's live subscriptions
// (a heap visit each, autovacuum off) while it held the group's dispatch lock, so subscribing
// slowed with every subscription the caller had. The count is now one row kept by triggers.
describe("the per-caller cap at 20 k live subscriptions", () => {
  let f: StoreFixture;
  const sent: { text: string; values: unknown[] }[] = [];
  let recorded: SubscriptionStore;
  const live = async (owner: string) =>
    (await f.pool.query<{ n: number }>("SELECT live AS n FROM subscription_owner_live WHERE owner = $1", [owner])).rows[0]?.n ?? 0;
  const counted = async (owner: string) =>
    (await f.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM subscriptions WHERE owner = $1 AND active", [owner])).rows[0]?.n;

  beforeAll(async () => {
    f = await StoreFixture.open(2);
    // In bulk, as a caller that subscribed for a long time (the triggers count these too).
    await f.pool.query(
      `INSERT INTO subscriptions (id, group_id, topic, match_rule, body_variant, url, node_instance, remote_ip, created_at, active,
         revision, start_height, delivered_height, delivered_idx, stats_rev, owner)
       SELECT 'bulk-' || g, '1', 'bulk', 'M', 'M', 'http://127.0.0.1:1/cb', 'n', '127.0.0.1', 1, true,
         nextval('subscription_revisions'), 0, 0, 0, 1, '127.0.0.1' FROM generate_series(1, ${LIVE}) g`,
    );
    // Every statement the subscribe's transaction sends, to explain it as sent.
    const pool = {
      connect: async () => {
        const c = await f.pool.connect();
        return new Proxy(c, {
          get(target, key) {
            if (key === "query")
              return (text: string, values: unknown[]) => {
                sent.push({ text, values });
                return target.query(text, values);
              };
            const v = Reflect.get(target, key);
            return typeof v === "function" ? v.bind(target) : v;
          },
        });
      },
    };
    recorded = new SubscriptionStore(pool as unknown as pg.Pool);
  }, 120_000);
  afterAll(async () => {
    await f?.close();
  });

  it("keeps each owner's live count through create, refuse, end, resume and direct writes", async () => {
    expect(await live("127.0.0.1")).toBe(LIVE);
    const over = await f.subs.subscribe(f.request(randomUUID(), "t"), LIVE);
    expect(over).toEqual({ kind: "over-limit", live: LIVE });
    const id = randomUUID();
    expect((await f.subs.subscribe(f.request(id, "t"), LIVE + 1)).kind).toBe("created");
    expect((await f.subs.subscribe(f.request(randomUUID(), "t"), LIVE + 1)).kind).toBe("over-limit");
    await f.subs.unsubscribe(id);
    expect(await live("127.0.0.1")).toBe(LIVE);
    expect((await f.subs.subscribe(f.request(id, "t"), LIVE + 1)).kind).toBe("resumed");
    await f.pool.query("UPDATE subscriptions SET owner = 'someone' WHERE id = 'bulk-1'");
    await f.pool.query("DELETE FROM subscriptions WHERE id = 'bulk-2'");
    await f.pool.query("UPDATE subscriptions SET active = false WHERE id = 'bulk-3'");
    await f.pool.query("UPDATE subscriptions SET url = 'http://127.0.0.1:2/cb' WHERE id = 'bulk-4'");
    expect({ mine: await live("127.0.0.1"), theirs: await live("someone") }).toEqual({
      mine: await counted("127.0.0.1"),
      theirs: await counted("someone"),
    });
    expect(await live("127.0.0.1")).toBe(LIVE - 2);
  });

  it("reads no statement's worth of the caller's subscriptions while subscribing", async () => {
    sent.length = 0;
    expect((await recorded.subscribe(f.request(randomUUID(), "t"), LIVE + 10)).kind).toBe("created");
    const reads = sent.filter((q) => /^\s*SELECT/i.test(q.text) && !q.text.includes("pg_advisory"));
    expect(reads.length).toBeGreaterThan(2);
    const c = await f.pool.connect();
    try {
      await c.query("BEGIN");
      for (const q of reads) {
        const r = await c.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values);
        const plan = r.rows[0]?.["QUERY PLAN"][0].Plan as PlanNode;
        const widest = Math.max(...nodes(plan).map((n) => n["Actual Rows"] * n["Actual Loops"]));
        expect(widest, q.text).toBeLessThanOrEqual(1);
      }
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  });
});
