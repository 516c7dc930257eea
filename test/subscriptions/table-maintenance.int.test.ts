import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { DeliveryAttemptStore, migrate, poolOptions, type SubscribeRequest, SubscriptionStore, TableMaintenanceStore } from "@evb/storage";

const ROWS = 20_000;

// Crash survived: none. Issue 29 item 7: with autovacuum off (this Postgres runs so) the space of
// delivered backlog rows and pruned attempts was never reclaimed, and the tables grew without
// bound under a steady load. The notifier's maintenance round vacuums them itself. In a database
// of its own: a vacuum keeps the rows any transaction of the same database may still see, and
// other suites' long transactions in the shared one would keep these.
describe("table maintenance with autovacuum off", () => {
  const database = `evb_maint_${randomBytes(4).toString("hex")}`;
  const url = new URL(inject("databaseUrl"));
  const admin = new pg.Client({ connectionString: url.toString() });
  const id = randomUUID();
  const request: SubscribeRequest = {
    id,
    groupId: "1",
    topic: "t",
    matchRule: "M",
    bodyVariant: "M",
    url: "http://127.0.0.1:1/cb",
    nodeInstance: "127.0.0.1:8080",
    remoteIp: "127.0.0.1",
    owner: "127.0.0.1",
    now: 1,
  };
  let f: { pool: pg.Pool; schema: string; subs: SubscriptionStore };
  const poolOf = (size: number) => {
    const own = new URL(url);
    own.pathname = `/${database}`;
    const pool = new pg.Pool(poolOptions(own.toString(), "evb", size));
    // The database is dropped WITH (FORCE) at the end: a connection still closing is told so.
    pool.on("error", () => {});
    return pool;
  };

  /** Every statement on one connection, so that its statistics can be flushed on demand. */
  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    const pool = poolOf(1);
    f = { pool, schema: "evb", subs: new SubscriptionStore(pool) };
    await migrate(pool, "evb", silentLogger);
    await f.subs.subscribe(request);
    // As on a Postgres with autovacuum off (as here, conf.d/90-ci.conf), wherever this runs.
    await f.pool.query("ALTER TABLE subscription_backlog SET (autovacuum_enabled = false)");
    await f.pool.query("ALTER TABLE delivery_attempts SET (autovacuum_enabled = false)");
  });
  afterAll(async () => {
    await f?.pool.end();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  });

  const fill = async () => {
    await f.pool.query(
      "INSERT INTO subscription_backlog (subscription_id, height, idx) SELECT $1, g, 0 FROM generate_series(1, $2::int) g",
      [id, ROWS],
    );
    await f.pool.query(
      `INSERT INTO delivery_attempts (subscription_id, newest_at, attempt_count, event_ids, attempted_at, duration_ms, status, error, excerpt)
       SELECT $1, 1, 1, ARRAY['e-' || g], ARRAY[1::bigint], ARRAY[5], ARRAY[200], ARRAY[NULL::text], ARRAY['ok'] FROM generate_series(1, $2::int) g`,
      [id, ROWS],
    );
  };
  /** As the broker drops them: the backlog when a subscription ends, the attempt log by its pruner. */
  const drain = async () => {
    await f.subs.unsubscribe(id);
    await f.subs.subscribe(request); // resumed: live again, backlog empty
    expect(await new DeliveryAttemptStore(f.pool).prune(2, 1_000_000, [])).toBe(ROWS);
  };
  const bytes = async () =>
    (
      await f.pool.query<{ b: string; a: string }>(
        "SELECT pg_total_relation_size('subscription_backlog') AS b, pg_total_relation_size('delivery_attempts') AS a",
      )
    ).rows[0] as { b: string; a: string };
  const dead = async () => {
    await f.pool.query("SELECT pg_stat_force_next_flush()");
    await f.pool.query("SELECT 1"); // the flush happens as the connection goes idle after the call
    const r = await f.pool.query<{ relname: string; n: number }>(
      "SELECT relname, n_dead_tup::int AS n FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY($1) ORDER BY relname",
      [["delivery_attempts", "subscription_backlog"]],
    );
    return Object.fromEntries(r.rows.map((x) => [x.relname, x.n]));
  };

  it("grows while nothing vacuums, and reclaims the space after a maintenance round", async () => {
    await fill();
    const before = await bytes();
    await drain();
    await fill();
    const unreclaimed = await bytes();
    // The control: deleted rows' space is not reused without a vacuum (so this test can fail).
    expect(Number(unreclaimed.b)).toBeGreaterThan(Number(before.b) * 1.5);
    expect(Number(unreclaimed.a)).toBeGreaterThan(Number(before.a) * 1.5);

    await drain();
    expect(await dead()).toEqual({ delivery_attempts: 2 * ROWS, subscription_backlog: 2 * ROWS });
    expect(await new TableMaintenanceStore(f.pool).vacuum(60_000)).toBe("done");
    expect(await dead()).toEqual({ delivery_attempts: 0, subscription_backlog: 0 });
    await fill();
    // The same rows again fit in the space the round reclaimed.
    expect(Number((await bytes()).b)).toBeLessThanOrEqual(Number(unreclaimed.b));
    expect(Number((await bytes()).a)).toBeLessThanOrEqual(Number(unreclaimed.a));
  });

  it("skips its round while another notifier holds it", async () => {
    const other = await f.pool.connect();
    try {
      await other.query("SELECT pg_advisory_lock(hashtext('evb.table-maintenance'), hashtext(current_schema()))");
      other.release();
      // The pool's one connection holds the lock: a second one of the same schema asks for it.
      const second = poolOf(1);
      try {
        expect(await new TableMaintenanceStore(second).vacuum(60_000)).toBe("busy");
      } finally {
        await second.end();
      }
    } finally {
      await f.pool.query("SELECT pg_advisory_unlock_all()");
    }
    expect(await new TableMaintenanceStore(f.pool).vacuum(60_000)).toBe("done");
  });
});
