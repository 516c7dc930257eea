import { inTransaction, poolOptions } from "@evb/storage";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TcpRelay } from "./support/tcp-relay.ts";

// Crash survived: Postgres connections cut in the middle of a transaction, both while a query
// runs and between two queries. pg emits 'error' on a checked-out client whose connection dies;
// unheard, that event kills the process (it killed an indexer in a CI run). The transaction
// must fail like any storage error instead, and the pool must work again once Postgres answers.
// (Unheard, the 'error' event is an uncaught exception here too, which fails the vitest run.)
describe("a transaction whose connection is cut", () => {
  let relay: TcpRelay;
  let pool: pg.Pool;
  beforeAll(async () => {
    relay = TcpRelay.for(inject("databaseUrl"), 5432);
    await relay.start();
    pool = new pg.Pool(poolOptions(relay.via(inject("databaseUrl")), "public", 2, 5_000));
    pool.on("error", () => {}); // idle clients cut with the others
  });
  afterAll(async () => {
    relay?.up();
    await pool?.end();
    relay?.close();
  });

  it("fails with the connection error while a query runs, and the pool recovers", async () => {
    const tx = inTransaction(pool, async (c) => {
      await c.query("SELECT pg_sleep(2)");
      return "committed";
    });
    await new Promise((r) => setTimeout(r, 300));
    relay.down();
    await expect(tx).rejects.toThrow(/Connection terminated|ECONNRESET/);
    relay.up();
    expect(await inTransaction(pool, async (c) => (await c.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one)).toBe(1);
  });

  it("fails on the next query when the connection dies between two queries, and the pool recovers", async () => {
    const tx = inTransaction(pool, async (c) => {
      await c.query("SELECT 1");
      await new Promise((r) => setTimeout(r, 600)); // no query in flight while the cut happens
      await c.query("SELECT 2");
      return "committed";
    });
    await new Promise((r) => setTimeout(r, 200));
    relay.down();
    await expect(tx).rejects.toThrow();
    relay.up();
    expect(await inTransaction(pool, async (c) => (await c.query<{ two: number }>("SELECT 2 AS two")).rows[0]?.two)).toBe(2);
  });
});
