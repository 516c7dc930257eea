import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rest, uniqueTopic } from "./support/broker-expect.ts";
import { verifyLedger } from "./support/ledger-integrity.ts";
import { TestSystem } from "./support/system.ts";

// Crash survived: none. This suite proves that verifyLedger(), which the crash tests rely on,
// notices each kind of damage: a check that cannot fail would make those tests worthless.
describe("verifyLedger notices a damaged ledger", () => {
  let sys: TestSystem;
  let db: pg.Client;
  const verify = () => verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });

  beforeAll(async () => {
    sys = await TestSystem.start();
    const topics = [uniqueTopic("sound"), uniqueTopic("sound")];
    for (const topic of topics) await rest(sys.gatewayUrl, "L", "open", { topic });
    for (let i = 0; i < 6; i++) {
      const r = await rest(
        sys.gatewayUrl,
        "L",
        "publish",
        { topic: topics[i % 2] as string, content: `e${i}`, "event-n": String(i) },
        "POST",
      );
      expect(r.json).toMatchObject({ status: "SUCCESS" });
    }
    db = new pg.Client({ connectionString: sys.env.DATABASE_URL, options: `-c search_path="${sys.env.DATABASE_SCHEMA}"` });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await sys?.stop();
  });

  /** Applies `damage`, expects a problem matching `pattern`, then applies `repair`. */
  async function expectNoticed(damage: string, repair: string, pattern: RegExp): Promise<void> {
    await db.query(damage);
    try {
      const { problems } = await verify();
      expect(
        problems.some((p) => pattern.test(p)),
        problems.join("\n"),
      ).toBe(true);
    } finally {
      await db.query(repair);
    }
    expect((await verify()).problems).toEqual([]);
  }

  it("a sound ledger has no problems and lists every event", async () => {
    const report = await verify();
    expect(report.problems).toEqual([]);
    expect(report.events.map((e) => e.content).sort()).toEqual(["e0", "e1", "e2", "e3", "e4", "e5"]);
    expect(report.height).toBeGreaterThanOrEqual(1);
  });

  it("an edited event content breaks its transaction hash", async () => {
    await expectNoticed(
      "UPDATE events SET content = convert_to('edited', 'UTF8') WHERE seq = 1 AND idx = 0 AND height = 1",
      "UPDATE events SET content = convert_to('e0', 'UTF8') WHERE seq = 1 AND idx = 0 AND height = 1",
      /tx_hash does not recompute/,
    );
  });

  it("an edited extension breaks its transaction hash", async () => {
    await expectNoticed(
      `UPDATE events SET extensions = '{"event-n":"9"}' WHERE height = 1 AND idx = 0`,
      `UPDATE events SET extensions = '{"event-n":"0"}' WHERE height = 1 AND idx = 0`,
      /tx_hash does not recompute/,
    );
  });

  it("a replaced transaction hash is reported", async () => {
    const original = (await db.query("SELECT tx_hash FROM events WHERE height = 1 AND idx = 0")).rows[0].tx_hash as string;
    await expectNoticed(
      "UPDATE events SET tx_hash = '0x' || repeat('a', 64) WHERE height = 1 AND idx = 0",
      `UPDATE events SET tx_hash = '${original}' WHERE height = 1 AND idx = 0`,
      /event .*: stored tx_hash does not recompute/,
    );
  });

  it("an edited block hash is reported", async () => {
    const original = (await db.query("SELECT hash FROM blocks WHERE height = 1")).rows[0].hash as string;
    await expectNoticed(
      "UPDATE blocks SET hash = '0x' || repeat('b', 64) WHERE height = 1",
      `UPDATE blocks SET hash = '${original}' WHERE height = 1`,
      /block 1: hash does not recompute/,
    );
  });

  it("a broken prev_hash link is reported", async () => {
    await expectNoticed(
      "UPDATE blocks SET prev_hash = '0x' || repeat('1', 64) WHERE height = 1",
      "UPDATE blocks SET prev_hash = '0x' || repeat('0', 64) WHERE height = 1",
      /block 1: prev_hash/,
    );
  });

  it("a gap in a topic's sequence numbers is reported", async () => {
    await expectNoticed(
      "UPDATE events SET seq = seq + 100 WHERE height = 1 AND idx = 0",
      "UPDATE events SET seq = seq - 100 WHERE height = 1 AND idx = 0",
      /seq in block order/,
    );
  });
});
