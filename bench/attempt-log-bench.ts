/**
 * `node bench/attempt-log-bench.ts`: what the delivery-attempt log adds to recording a delivered
 * batch, measured on Postgres alone (the shared machine's load swings the whole-pipeline bench by
 * 2×, which hides a difference of a few per cent). Records BATCHES batches of 50 events of one
 * subscription with and without their attempts, alternating, in a scratch schema, and prints
 * the mean time per batch of each. Not a test: nothing here asserts.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { DeliveryStore, migrate, poolOptions } from "@evb/storage";

const url = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = `bench_attempts_${randomBytes(3).toString("hex")}`;
const batches = Number(process.env.BATCHES ?? 400);
const pool = new pg.Pool(poolOptions(url, schema, 4, 60_000));
const silent = { debug() {}, info() {}, warn() {}, error() {} };
try {
  await migrate(pool, schema, silent);
  const store = new DeliveryStore(pool);
  const id = "00000000-0000-4000-8000-000000000001";
  await pool.query(
    `INSERT INTO subscriptions (id, group_id, topic, match_rule, body_variant, url, node_instance, remote_ip, created_at, active,
       revision, start_height, delivered_height, delivered_idx) VALUES ($1, '1', 't', 'M', 'M', 'http://x', 'n', 'r', 0, true, 1, 0, 0, 0)`,
    [id],
  );
  const lease = await store.lease(id, 600_000, 0);
  if (!lease.ok) throw new Error("no lease");
  const took = { with: 0, without: 0 };
  let height = 1;
  for (let b = 0; b < batches; b++) {
    const withLog = b % 2 === 0;
    const events = Array.from({ length: 50 }, (_, i) => ({ height, idx: i }));
    await pool.query("INSERT INTO subscription_backlog (subscription_id, height, idx) SELECT $1, $2, i FROM generate_series(0, 49) i", [
      id,
      height,
    ]);
    const attempts = withLog
      ? events.map((e) => ({
          eventId: `abcd-${e.height}-${e.idx}`,
          at: Date.now(),
          durationMs: 3,
          status: 200,
          error: null,
          excerpt: "ok",
        }))
      : [];
    const t = performance.now();
    await store.deliveredBatch({ id, token: lease.token, events, attempts, now: Date.now(), leaseMs: 600_000 });
    took[withLog ? "with" : "without"] += performance.now() - t;
    height++;
  }
  const per = (ms: number) => (ms / (batches / 2)).toFixed(2);
  process.stdout.write(
    `deliveredBatch of 50 events: ${per(took.without)} ms without the attempt log, ${per(took.with)} ms with it ` +
      `(+${(((took.with - took.without) / took.without) * 100).toFixed(0)}%), ${batches / 2} batches each\n`,
  );
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
  await pool.end();
}
