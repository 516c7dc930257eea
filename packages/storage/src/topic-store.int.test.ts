import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { migrate } from "./migrate.ts";
import { poolOptions } from "./pool.ts";
import { TopicStore, topicsByNameSql } from "./topic-store.ts";

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  Plans?: PlanNode[];
}

function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/** The most rows any one node of the executed plan produced, over all its loops. */
function widest(plan: PlanNode): number {
  return Math.max(...nodes(plan).map((n) => n["Actual Rows"] * n["Actual Loops"]));
}

/** Each node as type, index and rows, for a failure's message. */
function summary(plan: PlanNode): string {
  return nodes(plan)
    .map((n) => `${n["Node Type"]}${n["Index Name"] ? ` ${n["Index Name"]}` : ""}: ${n["Actual Rows"]}x${n["Actual Loops"]}`)
    .join(", ");
}

const TOPICS = 30_000;

// Crash survived: none. These pin issue 29 item 7 on a Postgres with autovacuum off, where the
// topics table has no statistics (migrate() analysed it empty; nothing since): rest/list's page
// and total, and the seal's lookup of a block's topics, read what they answer, not the group.
describe("TopicStore at 30 k topics with no statistics", () => {
  const schema = `t_${randomBytes(4).toString("hex")}`;
  let pool: pg.Pool;
  const queries: { text: string; values: unknown[] }[] = [];
  let topics: TopicStore;

  const explain = async (text: string, values: unknown[]): Promise<PlanNode> => {
    const c = await pool.connect();
    try {
      await c.query("BEGIN"); // the lookup's FOR UPDATE, rolled back
      const r = await c.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      return r.rows[0]?.["QUERY PLAN"][0].Plan as PlanNode;
    } finally {
      await c.query("ROLLBACK");
      c.release();
    }
  };

  beforeAll(async () => {
    pool = new pg.Pool(poolOptions(inject("databaseUrl"), schema, 2));
    await migrate(pool, schema, silentLogger);
    // In bulk, as a group that grew over time; another group beside it, and one topic opened by name.
    for (let from = 1; from < TOPICS; from += 5_000) {
      await pool.query(
        `INSERT INTO topics (group_id, name, address, creator, created_at)
         SELECT '1', 'topic-' || g, md5(g::text), '0xabc', g FROM generate_series($1::int, $2::int) g`,
        [from, Math.min(from + 4_999, TOPICS - 1)],
      );
    }
    await pool.query(
      `INSERT INTO topics (group_id, name, address, creator, created_at)
       SELECT '2', 'other-' || g, md5(g::text), '0xabc', g FROM generate_series(1, 50) g`,
    );
    await new TopicStore(pool).open("1", "opened-last", "0xdef", 1);
    await new TopicStore(pool).open("1", "topic-7", "0xdef", 2); // already there: takes no place
    // Every query the store sends, to explain it as sent.
    const recording = {
      query: (text: string, values: unknown[]) => {
        queries.push({ text, values });
        return pool.query(text, values);
      },
    };
    topics = new TopicStore(recording as unknown as pg.Pool);
  }, 120_000);
  afterAll(async () => {
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  });

  it("runs on a table without statistics (analysed by migrate() only while empty)", async () => {
    const stats = await pool.query("SELECT 1 FROM pg_stats WHERE schemaname = $1 AND tablename = 'topics'", [schema]);
    expect(stats.rowCount).toBe(0);
  });

  it("answers every page as a count and an ordinal-ordered OFFSET did", async () => {
    const old = async (offset: number, limit: number) => ({
      total: (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM topics WHERE group_id = '1'")).rows[0]?.n,
      names: (
        await pool.query<{ name: string }>("SELECT name FROM topics WHERE group_id = '1' ORDER BY ordinal LIMIT $1 OFFSET $2", [
          limit,
          offset,
        ])
      ).rows.map((r) => r.name),
    });
    for (const [offset, limit] of [
      [0, 10],
      [12_340, 100],
      [TOPICS - 10, 10],
      [TOPICS - 3, 10],
      [TOPICS, 10],
      [TOPICS + 500, 1],
    ] as const) {
      const page = await topics.list("1", offset, limit);
      expect({ total: page.total, names: page.rows.map((r) => r.name) }).toEqual(await old(offset, limit));
    }
    expect((await topics.list("1", TOPICS - 1, 10)).rows.map((r) => r.name)).toEqual(["opened-last"]);
    expect((await topics.list("2", 40, 100)).total).toBe(50);
    expect(await topics.list("none", 0, 10)).toEqual({ total: 0, rows: [] });
  });

  it("reads the last page and the total without touching the rest of the group", async () => {
    queries.length = 0;
    await topics.list("1", TOPICS - 10, 10);
    expect(queries).toHaveLength(2);
    for (const q of queries) {
      const plan = await explain(q.text, q.values);
      expect(nodes(plan).map((n) => n["Node Type"])).not.toContain("Seq Scan");
      expect(widest(plan), summary(plan)).toBeLessThanOrEqual(10);
    }
  });

  it("looks a block's 300 topics up by primary key, not through the whole group", async () => {
    const names = Array.from({ length: 300 }, (_, i) => `topic-${i * 97 + 1}`).sort();
    const plan = await explain(topicsByNameSql("name, seq, address", true), ["1", names]);
    expect(widest(plan), summary(plan)).toBeLessThanOrEqual(names.length);
    expect(nodes(plan).some((n) => n["Index Name"] === "topics_pkey")).toBe(true);
    const missing = await topics.missing("1", [...names, "absent"]);
    expect(missing).toEqual(new Set(["absent"]));
    expect(widest(await explain(queries.at(-1)?.text as string, queries.at(-1)?.values as unknown[]))).toBeLessThanOrEqual(301);
  });
});
