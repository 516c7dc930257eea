import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { postgresAnswers } from "./postgres-server.ts";
import { redisAnswers } from "./redis-server.ts";
import { startStack } from "./stack.ts";

// When nothing answers at DATABASE_URL / REDIS_URL, the stack starts private servers from the
// installed binaries, and stop() takes them down again. Crash survived: none.
describe("startStack without reachable Postgres and Redis", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-stack-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts a private Postgres and Redis, and stops exactly those", async () => {
    const lines: string[] = [];
    const stack = await startStack({
      dir,
      kafkaBrokers: inject("kafkaBrokers"),
      databaseUrl: "postgres://postgres@127.0.0.1:1/none",
      redisUrl: "redis://127.0.0.1:1",
      progress: (m) => lines.push(m),
    });
    try {
      expect(stack.databaseUrl).not.toContain(":1/");
      expect(stack.redisUrl).not.toBe("redis://127.0.0.1:1");
      const client = new pg.Client({ connectionString: stack.databaseUrl });
      await client.connect();
      expect((await client.query("select 41 + 1 as n")).rows[0].n).toBe(42);
      await client.end();
      expect(await redisAnswers(stack.redisUrl)).toBe(true);
      expect(lines.join("\n")).toMatch(/postgres: starting a private server/);
    } finally {
      await stack.stop();
    }
    expect(await postgresAnswers(stack.databaseUrl)).toBe(false);
    expect(await redisAnswers(stack.redisUrl)).toBe(false);
    // The shared servers were never touched.
    expect(await postgresAnswers(inject("databaseUrl"))).toBe(true);
  });
});
