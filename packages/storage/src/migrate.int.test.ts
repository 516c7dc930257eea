import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { loadMigrations, migrate } from "./migrate.ts";
import { poolOptions } from "./pool.ts";

// Crash survived: none. Migrations are applied once, in order, also by concurrent starters.
describe("migrate", () => {
  const schema = `mig_${randomBytes(4).toString("hex")}`;
  const pool = new pg.Pool(poolOptions(inject("databaseUrl"), schema, 4));
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it("applies every file once, in version order, even when three services start together", async () => {
    const files = loadMigrations();
    expect(files.map((m) => m.version)).toEqual([...files.map((m) => m.version)].sort((a, b) => a - b));
    const counts = await Promise.all([1, 2, 3].map(() => migrate(pool, schema, silentLogger)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(files.length);
    const rows = (await pool.query<{ version: number }>("SELECT version FROM schema_migrations ORDER BY applied_at, version")).rows;
    expect(rows.map((r) => r.version)).toEqual(files.map((m) => m.version));
    expect(await migrate(pool, schema, silentLogger)).toBe(0);
  });

  it("rolls back a failing migration completely", async () => {
    const broken = [{ version: 9999, name: "9999_broken.sql", sql: "CREATE TABLE half_done (x int); SELECT * FROM no_such_table;" }];
    await expect(migrate(pool, schema, silentLogger, broken)).rejects.toThrow(/no_such_table/);
    const t = await pool.query("SELECT to_regclass($1) AS t", [`"${schema}".half_done`]);
    expect(t.rows[0].t).toBeNull();
    expect((await pool.query("SELECT 1 FROM schema_migrations WHERE version = 9999")).rowCount).toBe(0);
  });
});
