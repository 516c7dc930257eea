import { poolOptions } from "@evb/storage";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { TcpRelay } from "./support/tcp-relay.ts";

// Fault survived: a service that vanishes silently (no FIN, no RST: a pulled cable, a dead VM)
// in the middle of a transaction holding a row lock. On the multi-host bed a notifier that lost
// its link kept the group's dispatch_cursors row locked for the whole outage ("idle in
// transaction"), and every other notifier's dispatch waited on it. The connection settings every
// pool asks for (pool.ts SERVER_SIDE) make the server end such a session within seconds.
describe("a client that goes silent inside a transaction", () => {
  let relay: TcpRelay;
  let silent: pg.Pool;
  let other: pg.Pool;
  const table = `silent_client_${process.pid}`;
  beforeAll(async () => {
    relay = TcpRelay.for(inject("databaseUrl"), 5432);
    await relay.start();
    silent = new pg.Pool(poolOptions(relay.via(inject("databaseUrl")), "public", 1, 60_000));
    silent.on("error", () => {});
    other = new pg.Pool(poolOptions(inject("databaseUrl"), "public", 1, 30_000));
    await other.query(`CREATE TABLE ${table} (id int PRIMARY KEY)`);
    await other.query(`INSERT INTO ${table} VALUES (1)`);
  });
  afterAll(async () => {
    await other?.query(`DROP TABLE IF EXISTS ${table}`);
    await other?.end();
    relay?.up();
    await silent?.end().catch(() => {});
    relay?.close();
  });

  it("asks the server for the session settings that bound a vanished client", async () => {
    const r = await other.query<{ a: string; b: string; c: string }>(
      "SELECT current_setting('idle_in_transaction_session_timeout') AS a, current_setting('client_connection_check_interval') AS b, current_setting('tcp_user_timeout') AS c",
    );
    expect(r.rows[0]).toEqual({ a: "5s", b: "2s", c: "10000" });
  });

  it("loses its row lock within seconds, so another client's FOR UPDATE goes on", async () => {
    const c = await silent.connect();
    c.on("error", () => {});
    await c.query("BEGIN");
    await c.query(`SELECT id FROM ${table} WHERE id = 1 FOR UPDATE`);
    relay.stall();
    const started = Date.now();
    // Without the settings this waits until the 30 s query timeout and fails: the lock stays.
    const r = await other.query(`SELECT id FROM ${table} WHERE id = 1 FOR UPDATE`);
    expect(r.rows).toEqual([{ id: 1 }]);
    expect(Date.now() - started).toBeLessThan(30_000);
    c.release(new Error("silent"));
  });
});
