import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

// Crash survived: none. `npm run keys` (scripts/keys.ts) on a fresh schema: it migrates, prints
// the key once, stores only its hash, lists and revokes, and refuses bad arguments.
describe("npm run keys", () => {
  const schema = `t_keys_${randomBytes(4).toString("hex")}`;
  const env = { PATH: process.env.PATH, DATABASE_URL: inject("databaseUrl"), DATABASE_SCHEMA: schema };
  const keys = (...args: string[]) =>
    spawnSync(process.execPath, ["scripts/keys.ts", ...args], { cwd: ROOT, env, encoding: "utf8", timeout: 60_000 });

  afterAll(async () => {
    const c = new pg.Client({ connectionString: inject("databaseUrl") });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await c.end();
  });

  it("creates a key shown once, stores only its hash, lists and revokes it", async () => {
    const made = keys("create", "--roles", "publish,read", "--groups", "1,2", "--name", "ci", "--publish-rate", "5");
    expect(made.status, made.stderr).toBe(0);
    const key = made.stdout.trim();
    expect(key).toMatch(/^evbk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const id = key.slice(5, 17);
    expect(made.stderr).toContain(`created ${id}\tci\troles=publish,read\tgroups=1,2\tpublish-rate=5/s burst 5`);

    const c = new pg.Client({ connectionString: inject("databaseUrl") });
    await c.connect();
    try {
      const stored = (await c.query(`SELECT * FROM "${schema}".api_keys`)).rows;
      expect(stored).toHaveLength(1);
      const text = JSON.stringify(stored, (_k, v) => (v?.type === "Buffer" ? Buffer.from(v.data).toString("hex") : v));
      expect(text).not.toContain(key.slice(18));
      expect((stored[0].secret_sha256 as Buffer).length).toBe(32);
    } finally {
      await c.end();
    }

    const listed = keys("list");
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\tci\\t.*\\tlive$`, "m"));
    expect(listed.stdout).not.toContain(key.slice(18));
    expect(keys("revoke", id).status).toBe(0);
    expect(keys("list").stdout).toMatch(new RegExp(`^${id}\\t.*\\trevoked=`, "m"));
    expect(keys("revoke", id).status).toBe(2);
  }, 120_000);

  it("prints the usage on --help and exits 0, before looking for Postgres", () => {
    const r = spawnSync(process.execPath, ["scripts/keys.ts", "--help"], { cwd: ROOT, env: { PATH: process.env.PATH }, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^usage:\n {2}npm run keys -- create /);
    expect(r.stderr).toBe("");
  });

  it("refuses bad arguments with the usage, writing nothing", () => {
    for (const args of [
      [],
      ["create", "--roles", "root", "--groups", "1", "--name", "x"],
      ["create", "--roles", "read", "--name", "x"],
      ["create", "--roles", "read", "--groups", "1"],
      ["create", "--roles", "read", "--groups", "1", "--name", "x", "--publish-rate", "-1"],
      ["revoke", "nope"],
    ]) {
      const r = keys(...args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage:");
      expect(r.stdout).toBe("");
    }
  }, 120_000);
});
