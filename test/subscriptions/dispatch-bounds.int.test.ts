import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Logger } from "@evb/domain";
import { END_OF_BLOCK } from "@evb/storage";
import { loadNotifierConfig } from "../../services/notifier/src/config.ts";
import { startNotifier } from "../../services/notifier/src/main.ts";
import { Index, StoreFixture } from "./store-fixture.ts";

/** Keeps what the notifier logs, to check what an operator would see. */
function recordingLogger(): Logger & { lines: { level: string; msg: string; obj: Record<string, unknown> }[] } {
  const lines: { level: string; msg: string; obj: Record<string, unknown> }[] = [];
  const at = (level: string) => (obj: object | string, msg?: string) =>
    lines.push(typeof obj === "string" ? { level, msg: obj, obj: {} } : { level, msg: msg ?? "", obj: obj as Record<string, unknown> });
  return { lines, debug: () => {}, info: at("info"), warn: at("warn"), error: at("error") };
}

// Crash survived: none. A dispatch run must stay bounded whatever the fan-out, and a run that
// fails again and again must be visible.
describe("one dispatch can need unbounded memory, and the failure repeats on every poll", () => {
  let f: StoreFixture;
  beforeAll(async () => {
    f = await StoreFixture.open();
  });
  afterAll(async () => {
    await f?.close();
  });

  it("a block whose fan-out exceeds the row bound is dispatched in bounded runs, every event in order", async () => {
    const wide = Array.from({ length: 12 }, () => randomUUID());
    const exact = randomUUID();
    for (const id of wide) await f.subs.subscribe(f.request(id, "fan/#"));
    await f.subs.subscribe(f.request(exact, "fan/x"));
    // 25 events × 13 subscriptions = 325 rows in one block, then a small block.
    await f.seal(...Array.from({ length: 25 }, () => "fan/x"));
    await f.seal("fan/x", "other", "fan/x");
    const runs = await f.dispatchAll(new Index(), { maxEvents: 1000, maxRows: 40 });
    for (const r of runs) expect(r.rows).toBeLessThanOrEqual(40);
    // It stopped inside the big block instead of taking it whole.
    expect(runs.some((r) => r.to.idx !== END_OF_BLOCK)).toBe(true);
    expect(runs.reduce((n, r) => n + r.rows, 0)).toBe(27 * 13);
    const events = (await f.pool.query("SELECT height, idx FROM events WHERE topic = 'fan/x' ORDER BY height, idx")).rows;
    for (const id of [...wide, exact]) {
      const backlog = await f.deliveries.backlog(id, 100);
      expect(backlog.map((b) => [b.height, b.idx])).toEqual(events.map((e) => [e.height, e.idx]));
      expect(await f.counts(id)).toEqual({ pending: 27, backlog: 27, delivered: 0 });
    }
    expect(await f.dispatches.behind("1")).toBe(false);
  });

  it("an event matching more subscriptions than the bound still progresses, one event per run", async () => {
    const ids = Array.from({ length: 8 }, () => randomUUID());
    for (const id of ids) await f.subs.subscribe(f.request(id, "one/#"));
    await f.seal("one/a", "one/b", "one/c");
    const runs = await f.dispatchAll(new Index(), { maxEvents: 1000, maxRows: 5 });
    expect(runs.map((r) => [r.events, r.rows])).toEqual([
      [1, 8],
      [1, 8],
      [1, 8],
    ]);
    for (const id of ids) expect((await f.deliveries.backlog(id, 10)).map((b) => b.topic)).toEqual(["one/a", "one/b", "one/c"]);
  });

  it("a dispatch that keeps failing is logged every time, retried with backoff, shown on /health, and recovers", async () => {
    const logger = recordingLogger();
    const config = loadNotifierConfig({
      DATABASE_URL: inject("databaseUrl"),
      DATABASE_SCHEMA: f.schema,
      REDIS_URL: inject("redisUrl"),
      REDIS_PREFIX: `t${randomBytes(4).toString("hex")}`,
      KAFKA_BROKERS: inject("kafkaBrokers"),
      HOST: "127.0.0.1",
      HEALTH_PORT: "0",
      NOTIFIER_POLL_MS: "50",
    });
    // A fault Postgres keeps returning until repaired: the table the dispatcher needs is gone.
    await f.pool.query("ALTER TABLE dispatch_cursors RENAME TO dispatch_cursors_away");
    await f.seal("fail/a");
    const notifier = await startNotifier(config, logger);
    try {
      await expect.poll(async () => (await fetch(notifier.healthUrl)).status, { timeout: 10_000 }).toBe(503);
      const health = (await (await fetch(notifier.healthUrl)).json()) as { dispatchFailures: { groupId: string; lastError: string }[] };
      expect(health.dispatchFailures[0]).toMatchObject({ groupId: "1", lastError: expect.stringContaining("dispatch_cursors") });
      const failures = logger.lines.filter((l) => l.level === "warn" && /dispatch/.test(l.msg));
      expect(failures.length).toBeGreaterThanOrEqual(3);
      // Each failure is logged, and the retries are spaced out further and further.
      const delays = failures.map((l) => l.obj.retryInMs as number);
      expect(delays.slice(0, 3)).toEqual([50, 100, 200]);

      await f.pool.query("ALTER TABLE dispatch_cursors_away RENAME TO dispatch_cursors");
      await expect.poll(async () => (await fetch(notifier.healthUrl)).status, { timeout: 20_000 }).toBe(200);
      expect(logger.lines.some((l) => l.msg === "dispatch recovered")).toBe(true);
      expect(await f.dispatches.behind("1")).toBe(false);
    } finally {
      await notifier.close();
    }
  });
});
