import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALL_VARIANTS, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { type LedgerReport, verifyLedger } from "./support/ledger-integrity.ts";
import { blockHashes, inSchema } from "./support/ledger-services.ts";
import { type PublishOutcome, publishStream, waitUntil } from "./support/publish-stream.ts";
import { TestSystem } from "./support/system.ts";

// Failures survived: the ledger restored from a dump taken mid-stream (every block sealed after
// the dump lost from Postgres), and then the ledger's schema dropped altogether, both with the
// Kafka log kept. The indexer used to resume from the consumer group's offsets and hand out
// acknowledged eventIds again for other events. Now it seals the lost blocks again from the
// chain records and the log: every block hash and eventId the clients were given is identical,
// and the chain continues. Topics opened with rest/open (with and without events) used to live
// only in Postgres: a rebuilt ledger lacked those without events and re-created the others at
// their first event's seal time. Now open writes the row to the chain topic before answering
// true, and the rebuild puts every opened topic back with its address, creator and creation time.
interface TopicSnapshot {
  rows: Record<string, unknown>[];
  answers: Record<string, string>;
}

describe("a ledger rebuilt from the log", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-rebuild-"));
  const dump = join(dir, "ledger.dump");
  let sys: TestSystem;
  let topics: string[];
  const acked: PublishOutcome[] = [];
  let snapshot: { blocks: Map<number, string>; ledger: LedgerReport; topics: TopicSnapshot };
  /** Topics opened but never published to. */
  const quiet: string[] = [];

  const ledger = () => verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
  const publish = async (count: number, label: string) => {
    const out = await publishStream({ gateways: [sys.gatewayUrl], topics, count, concurrency: 3, content: (i) => `${label}-${i}` });
    expect(out.filter((o) => o.status !== "SUCCESS").map((o) => o.status)).toEqual([]);
    acked.push(...out);
  };
  const allChainRecordsWritten = () =>
    waitUntil("every block has its chain record", async () =>
      inSchema(sys.env, async (c) => (await c.query("SELECT count(*)::int AS n FROM blocks WHERE NOT chain_written")).rows[0].n === 0),
    );
  const dropSchema = () => inSchema(sys.env, (c) => c.query(`DROP SCHEMA "${sys.env.DATABASE_SCHEMA}" CASCADE`));
  const open = async (topic: string, variant: "L" | "M" | "E" = "L") =>
    expect(expectSuccess(await rest(sys.gatewayUrl, variant, "open", { topic }), variant)).toBe(true);
  /** The topic rows in list order, and what exist, state and list answer about them in every variant. */
  const topicSnapshot = async (): Promise<TopicSnapshot> => {
    const rows = await inSchema(
      sys.env,
      async (c) =>
        (await c.query("SELECT group_id, name, address, creator, created_at, seq, last_block, last_timestamp FROM topics ORDER BY ordinal"))
          .rows,
    );
    const answers: Record<string, string> = {};
    for (const variant of ALL_VARIANTS) {
      for (const topic of [...topics, ...quiet]) {
        for (const op of ["exist", "state"])
          answers[`${variant} ${op} ${topic}`] = (await rest(sys.gatewayUrl, variant, op, { topic })).text;
      }
      answers[`${variant} list`] = (await rest(sys.gatewayUrl, variant, "list", { pageIndex: "0", pageSize: "100" })).text;
    }
    return { rows, answers };
  };
  /** The blocks and events are the ones acknowledged, byte for byte, and every eventId still names its publish. */
  const expectSameLedger = async () => {
    expect(await topicSnapshot()).toEqual(snapshot.topics);
    expect(await blockHashes(sys.env)).toEqual(snapshot.blocks);
    const now = await ledger();
    expect(now.problems).toEqual([]);
    expect(now.events).toEqual(snapshot.ledger.events);
    for (const o of acked) {
      const data = expectSuccess(await rest(sys.gatewayUrl, "L", "getEvent", { eventId: o.eventId as string }), "L") as { content: string };
      expect(Buffer.from(data.content, "base64").toString("utf8"), o.eventId as string).toBe(o.content);
    }
  };

  beforeAll(async () => {
    sys = await TestSystem.start({});
    topics = [uniqueTopic("rebuild-a"), uniqueTopic("rebuild-b"), uniqueTopic("rebuild-c")];
    for (const topic of topics) await open(topic);
    quiet.push(uniqueTopic("rebuild-quiet-early"));
    await open(quiet[0] as string, "E");
  });
  afterAll(async () => {
    await sys?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("restored from a dump taken mid-stream: the lost blocks come back identical", async () => {
    await publish(30, "before-dump");
    await allChainRecordsWritten();
    execFileSync("pg_dump", ["--format=custom", `--schema=${sys.env.DATABASE_SCHEMA}`, `--file=${dump}`, sys.env.DATABASE_URL as string]);
    const dumped = (await blockHashes(sys.env)).size;
    // Opened after the dump: one that stays quiet, one that gets events in the lost blocks.
    quiet.push(uniqueTopic("rebuild-quiet-late"));
    await open(quiet[1] as string, "M");
    topics.push(uniqueTopic("rebuild-late"));
    await open(topics[3] as string);
    await open(topics[0] as string); // opening an existing topic changes nothing
    await publish(30, "after-dump");
    await allChainRecordsWritten();
    snapshot = { blocks: await blockHashes(sys.env), ledger: await ledger(), topics: await topicSnapshot() };
    expect(snapshot.topics.rows.map((r) => r.name)).toEqual([...topics.slice(0, 3), quiet[0], quiet[1], topics[3]]);
    expect(snapshot.blocks.size).toBeGreaterThan(dumped);

    await sys.kill("indexer-1");
    await dropSchema();
    execFileSync("pg_restore", [`--dbname=${sys.env.DATABASE_URL}`, dump]);
    expect((await blockHashes(sys.env)).size).toBe(dumped);
    await sys.restart("indexer-1");
    await expectSameLedger();

    // And the chain continues where it was.
    await publish(6, "after-restore");
    const after = await ledger();
    expect(after.problems).toEqual([]);
    expect(after.height).toBeGreaterThan(snapshot.blocks.size);
    await allChainRecordsWritten();
    quiet.push(uniqueTopic("rebuild-quiet-last"));
    await open(quiet[2] as string);
    snapshot = { blocks: await blockHashes(sys.env), ledger: after, topics: await topicSnapshot() };
  });

  it("the schema dropped: the whole ledger comes back identical, opened topics with and without events included", async () => {
    await sys.kill("indexer-1");
    await dropSchema();
    await sys.restart("indexer-1");
    // The running gateway answers out of the new ledger once the indexer reports it matched it
    // (LedgerGuard: until then, operations answer their failure code rather than a half ledger).
    await waitUntil("the gateway serves the rebuilt ledger", async () => (await fetch(`${sys.gatewayUrl}/readyz`)).status === 200, 60_000);
    await expectSameLedger();
    // The rebuild analysed what it wrote (autovacuum may be off: nothing else would).
    const stats = await inSchema(sys.env, (c) =>
      c.query(
        "SELECT DISTINCT tablename FROM pg_stats WHERE schemaname = current_schema() AND tablename IN ('blocks', 'events', 'topics')",
      ),
    );
    expect(stats.rows.map((r: { tablename: string }) => r.tablename).sort()).toEqual(["blocks", "events", "topics"]);
    await publish(3, "after-drop");
    expect((await ledger()).problems).toEqual([]);
  });
});
