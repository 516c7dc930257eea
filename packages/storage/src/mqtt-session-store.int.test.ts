import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { migrate } from "./migrate.ts";
import { MqttSessionStore } from "./mqtt-session-store.ts";
import { poolOptions } from "./pool.ts";

// Crash survived: none (the table's own semantics; the gateway's use of it is test/mqtt/mqtt-redis-loss.int.test.ts).
describe("MqttSessionStore", () => {
  const schema = `mqs_${randomBytes(4).toString("hex")}`;
  const pool = new pg.Pool(poolOptions(inject("databaseUrl"), schema, 2));
  const store = new MqttSessionStore(pool);
  beforeAll(async () => {
    await migrate(pool, schema, silentLogger);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it("keeps a session until it expires; an expired one is no session and is deleted when found", async () => {
    const session = { v: 1, subscriptions: [{ filter: "a/#", qos: 1, group: "1", position: { height: 3, idx: 2 } }] };
    await store.upsert("c1", session, 60_000);
    const row = await store.load("c1");
    expect(row?.session).toEqual(session);
    expect(row?.ttlMs).toBeGreaterThan(50_000);
    expect(row?.ttlMs).toBeLessThanOrEqual(60_000);
    await store.upsert("c1", { ...session, subscriptions: [] }, 60_000);
    expect((await store.load("c1"))?.session).toEqual({ v: 1, subscriptions: [] });
    await pool.query("UPDATE mqtt_sessions SET expires_at = now() - interval '1 second' WHERE client_id = 'c1'");
    expect(await store.load("c1")).toBeNull();
    expect((await pool.query("SELECT 1 FROM mqtt_sessions WHERE client_id = 'c1'")).rowCount).toBe(0);
    expect(await store.load("nobody")).toBeNull();
  });

  it("drop deletes; sweep deletes expired rows only, at most `limit` per call", async () => {
    await store.upsert("keep", { v: 1, subscriptions: [] }, 60_000);
    await store.upsert("gone", { v: 1, subscriptions: [] }, 60_000);
    await store.drop("gone");
    expect(await store.load("gone")).toBeNull();
    for (const id of ["x1", "x2", "x3"]) await store.upsert(id, { v: 1, subscriptions: [] }, 60_000);
    await pool.query("UPDATE mqtt_sessions SET expires_at = now() - interval '1 second' WHERE client_id LIKE 'x%'");
    expect(await store.sweep(2)).toBe(2);
    expect(await store.sweep(2)).toBe(1);
    expect(await store.sweep(2)).toBe(0);
    expect((await store.load("keep"))?.session).toEqual({ v: 1, subscriptions: [] });
  });
});
