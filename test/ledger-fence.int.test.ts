import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { verifyLedger } from "./support/ledger-integrity.ts";
import { dropSchema as dropLedgerSchema, inSchema } from "./support/ledger-services.ts";
import { type PublishOutcome, publishStream, publishThroughOutage, waitUntil } from "./support/publish-stream.ts";
import { type Probe, probeReadiness } from "./support/readiness-probes.ts";
import { TestSystem } from "./support/system.ts";

// Faults survived, each with the indexer RUNNING (issue 19): the ledger's schema dropped and
// recreated empty by another service's start, and an older dump of the ledger restored. Before,
// the live indexer sealed on top of whatever ledger it found: a fresh chain from height 1 after
// the drop, the blocks after the dump a second time (new seal times, new chain records) after
// the restore; over a thousand acknowledged eventIds then named nothing or other events. Now every
// seal is fenced (the ledger's identity, and the chain head the indexer last saw): the indexer
// stops, says why (ERROR line, /readyz 503), matches the ledger again (which rebuilds the lost
// blocks from the chain records) and goes on. Every acknowledged eventId must name its own
// content, and no eventId two.
describe("fenced seals: the ledger replaced under a running indexer", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-fence-"));
  const dump = join(dir, "ledger.dump");
  let sys: TestSystem;
  let topics: string[];
  const acked: PublishOutcome[] = [];
  /** Readiness answers of the indexer and the gateway, newest last. */
  const probes: Probe[] = [];
  const gatewayProbes: Probe[] = [];
  let stopProbing: (() => void) | undefined;

  const publish = (count: number, label: string) =>
    publishStream({ gateways: [sys.gatewayUrl], topics, count, concurrency: 2, content: (i) => `${label}-${i}` });
  const keep = (out: PublishOutcome[]) => {
    acked.push(...out.filter((o) => o.status === "SUCCESS"));
    return out;
  };
  const dropSchema = () => dropLedgerSchema(sys.env);
  const allChainRecordsWritten = () =>
    waitUntil("every block has its chain record", async () =>
      inSchema(sys.env, async (c) => (await c.query("SELECT count(*)::int AS n FROM blocks WHERE NOT chain_written")).rows[0].n === 0),
    );
  /** Publishes until one is acknowledged again (the indexer sealing on the rebuilt ledger). */
  const sealingAgain = (label: string) =>
    waitUntil(
      "publishes are acknowledged again",
      async () => keep(await publish(1, `${label}-${Date.now()}`)).some((o) => o.status === "SUCCESS"),
      90_000,
      500,
    );
  /** Both the indexer and the gateway answer ready again. */
  const readyAgain = () =>
    waitUntil(
      "the indexer and the gateway are ready again",
      async () => probes.at(-1)?.status === 200 && gatewayProbes.at(-1)?.status === 200,
      30_000,
    );
  /** Every acknowledged publish is found under its eventId with its own content; no eventId was given twice. */
  const expectEveryAckHolds = async () => {
    const ids = acked.map((o) => o.eventId);
    expect(new Set(ids).size, "an eventId acknowledged twice").toBe(ids.length);
    for (const o of acked) {
      const r = await rest(sys.gatewayUrl, "L", "getEvent", { eventId: o.eventId as string });
      const data = expectSuccess(r, "L") as { content: string };
      expect(Buffer.from(data.content, "base64").toString("utf8"), o.eventId as string).toBe(o.content);
    }
    const ledger = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(ledger.problems).toEqual([]);
  };

  beforeAll(async () => {
    sys = await TestSystem.start({ notifiers: 1, env: { PUBLISH_TIMEOUT_MS: "3000" } });
    topics = [uniqueTopic("fence-a"), uniqueTopic("fence-b")];
    for (const topic of topics) expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
    stopProbing = probeReadiness([
      { url: () => `${sys.originOf("indexer-1")}/readyz`, into: probes },
      { url: () => `${sys.gatewayUrl}/readyz`, into: gatewayProbes },
    ]);
  });
  afterAll(async () => {
    stopProbing?.();
    await sys?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the schema dropped mid-stream and recreated empty by a notifier's start: nothing is sealed on it from height 1", async () => {
    keep(await publish(20, "before-drop"));
    await allChainRecordsWritten();
    const out = await publishThroughOutage({
      gateways: [sys.gatewayUrl],
      topics,
      count: 30,
      concurrency: 2,
      content: (i) => `during-drop-${i}`,
      at: 8,
      outage: async () => {
        await dropSchema();
        await waitUntil(
          "the indexer says it stopped sealing",
          async () => probes.some((p) => p.status === 503 && /tables are gone|does not answer|no identity/.test(p.reason)),
          20_000,
        );
        // The gateway hears it through the indexer's heartbeat: its only indexer cannot seal.
        await waitUntil(
          "the gateway is not ready",
          async () => gatewayProbes.some((p) => p.status === 503 && /no indexer can seal group 1/.test(p.reason)),
          20_000,
        );
        // A notifier restarting: its migrations make the tables again, empty, under a new identity.
        await sys.kill("notifier-1");
        await sys.restart("notifier-1");
      },
    });
    keep(out);
    await sealingAgain("after-drop");
    await readyAgain();
    await expectEveryAckHolds();
  });

  it("an older dump restored while the indexer runs: the blocks after it come back identical, not sealed again", async () => {
    await allChainRecordsWritten();
    execFileSync("pg_dump", ["--format=custom", `--schema=${sys.env.DATABASE_SCHEMA}`, `--file=${dump}`, sys.env.DATABASE_URL as string]);
    keep(await publish(20, "after-dump"));
    await allChainRecordsWritten();
    const heightBefore = (await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string }))
      .height;
    probes.length = 0;
    await dropSchema();
    execFileSync("pg_restore", ["--single-transaction", `--dbname=${sys.env.DATABASE_URL}`, dump]);
    keep(await publish(10, "after-restore"));
    await sealingAgain("after-restore");
    await readyAgain();
    const after = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
    expect(after.height).toBeGreaterThan(heightBefore);
    await expectEveryAckHolds();
    expect(sys.exitedProcesses()).toEqual([]);
  });
});
