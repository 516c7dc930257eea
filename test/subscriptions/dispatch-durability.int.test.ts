import { randomUUID } from "node:crypto";
import { inTransaction } from "@evb/storage";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Index, StoreFixture } from "./store-fixture.ts";

/** Records every statement any pg client runs until `stop()` (the test looks for the dispatch run's BEGIN). */
function recordStatements(): { seen: string[]; stop: () => void } {
  const seen: string[] = [];
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...a: unknown[]) {
    const q = a[0];
    seen.push(typeof q === "string" ? q : String((q as { text?: string } | undefined)?.text ?? ""));
    return original.apply(this, a);
  };
  return { seen, stop: () => (proto.query = original) };
}

// Crash survived: a Postgres crash right after a dispatch run commits. The run writes only what
// the next run computes again from the sealed events (backlog rows, the cursor, pending counts),
// so it commits without waiting for the WAL flush; everything else keeps the flushed commit.
describe("the dispatch run's commit durability", () => {
  let f: StoreFixture;
  let recording: ReturnType<typeof recordStatements>;
  beforeAll(async () => {
    f = await StoreFixture.open(2);
    recording = recordStatements();
  });
  afterAll(async () => {
    recording?.stop();
    await f?.close();
  });

  it("a derived transaction commits without the WAL flush, only for itself; the default flushes", async () => {
    const setting = async (durability?: "derived" | "flushed") =>
      inTransaction(
        f.pool,
        async (c) => (await c.query<{ synchronous_commit: string }>("SHOW synchronous_commit")).rows[0]?.synchronous_commit,
        { durability },
      );
    expect(await setting("derived")).toBe("off");
    // SET LOCAL: the connection back in the pool flushes again.
    expect(await setting()).toBe("on");
    expect(await setting("flushed")).toBe("on");
  });

  it("a dispatch run is a derived transaction, and still writes its rows and cursor", async () => {
    const id = randomUUID();
    await f.subs.subscribe(f.request(id, "dur/#"));
    await f.seal("dur/a", "dur/b");
    const statements = recording.seen;
    statements.length = 0;
    const runs = await f.dispatchAll(new Index(), { maxEvents: 1000, maxRows: 1000 });
    expect(runs.reduce((n, r) => n + r.rows, 0)).toBe(2);
    expect(statements).toContain("BEGIN; SET LOCAL synchronous_commit = off");
    expect(statements).not.toContain("BEGIN");
    expect((await f.deliveries.backlog(id, 10)).map((e) => e.topic)).toEqual(["dur/a", "dur/b"]);
  });
});
