import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { dropSchema, inSchema } from "./support/ledger-services.ts";
import { type PublishOutcome, publishStream, waitUntil } from "./support/publish-stream.ts";
import { type Probe, probeReadiness } from "./support/readiness-probes.ts";
import { TestSystem } from "./support/system.ts";

// Fault survived (issue 19, item 6): ANOTHER deployment's dump restored under a running stack
// (same group, same topic names, so its eventIds are the very strings this deployment handed
// out, naming other content). Nothing may be answered or sealed out of it: the indexer finds
// that its chain records do not describe that ledger and refuses the group (ERROR, /readyz 503);
// the gateway, which answers only out of the ledger it served or one an indexer matched, refuses
// every operation with its failure code (and /readyz 503) instead of handing out the other
// deployment's events under this one's ids; the notifier neither dispatches nor delivers out of
// it (/readyz 503). The way out is the operator's: the schema emptied,
// the indexer restarted, and the ledger is rebuilt from Kafka with every id naming its own content.
describe("another deployment's dump restored under a running stack", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-foreign-"));
  const dump = join(dir, "other.dump");
  let sys: TestSystem;
  let topic: string;
  const acked: PublishOutcome[] = [];
  const indexerProbes: Probe[] = [];
  const gatewayProbes: Probe[] = [];
  const notifierProbes: Probe[] = [];
  let stopProbing: (() => void) | undefined;

  const publish = async (base: string, count: number, label: string) => {
    const out = await publishStream({ gateways: [base], topics: [topic], count, concurrency: 1, content: (i) => `${label}-${i}` });
    return out.filter((o) => o.status === "SUCCESS");
  };
  const getEvent = (eventId: string) => rest(sys.gatewayUrl, "L", "getEvent", { eventId });

  beforeAll(async () => {
    sys = await TestSystem.start({ notifiers: 1, env: { PUBLISH_TIMEOUT_MS: "3000" } });
    topic = uniqueTopic("foreign");
    stopProbing = probeReadiness([
      { url: () => `${sys.originOf("indexer-1")}/readyz`, into: indexerProbes },
      { url: () => `${sys.gatewayUrl}/readyz`, into: gatewayProbes },
      { url: () => `${sys.originOf("notifier-1")}/readyz`, into: notifierProbes },
    ]);
  });
  afterAll(async () => {
    stopProbing?.();
    await sys?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is refused by the indexer and the gateway, and the ledger is rebuilt once the operator empties it", async () => {
    expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
    acked.push(...(await publish(sys.gatewayUrl, 15, "ours")));
    expect(acked).toHaveLength(15);

    // The other deployment: its own schema, Kafka topics and identity; the same group and topic.
    const other = await TestSystem.start({ notifiers: 0, env: { PUBLISH_TIMEOUT_MS: "3000" } });
    let theirs: PublishOutcome[];
    try {
      expect(expectSuccess(await rest(other.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
      theirs = await publish(other.gatewayUrl, 15, "theirs");
      execFileSync("pg_dump", [
        "--format=custom",
        `--schema=${other.env.DATABASE_SCHEMA}`,
        `--file=${dump}`,
        other.env.DATABASE_URL as string,
      ]);
    } finally {
      await other.stop();
    }
    // Their ids are ours, for other content: what a careless answer would hand out.
    expect(theirs.map((o) => o.eventId)).toEqual(acked.map((o) => o.eventId));

    // Restored in place of ours (the dump names its own schema: restored, then renamed).
    await dropSchema(sys.env);
    execFileSync("pg_restore", ["--single-transaction", `--dbname=${sys.env.DATABASE_URL}`, dump]);
    await inSchema(sys.env, (c) => c.query(`ALTER SCHEMA "${other.env.DATABASE_SCHEMA}" RENAME TO "${sys.env.DATABASE_SCHEMA}"`));

    await waitUntil(
      "the indexer refuses the other ledger",
      async () => indexerProbes.some((p) => p.status === 503 && /another ledger than the one these Kafka topics record/.test(p.reason)),
      30_000,
    );
    await waitUntil(
      "the gateway refuses the other ledger",
      async () => gatewayProbes.at(-1)?.status === 503 && /not the one this service served/.test(gatewayProbes.at(-1)?.reason ?? ""),
      30_000,
    );
    // Nor does the notifier dispatch or deliver out of it (the other deployment's subscribers).
    await waitUntil(
      "the notifier refuses the other ledger",
      async () => notifierProbes.at(-1)?.status === 503 && /nothing is dispatched or delivered/.test(notifierProbes.at(-1)?.reason ?? ""),
      30_000,
    );
    // No acknowledged id is answered with the other deployment's content, nor as missing.
    for (const o of acked) {
      const r = await getEvent(o.eventId as string);
      expect(r.text).toMatch(/the ledger is not available/);
      expect(r.text).not.toContain(Buffer.from("theirs").toString("base64").slice(0, 6));
    }
    // Nothing is sealed into it.
    expect((await publish(sys.gatewayUrl, 1, "while-foreign")).length).toBe(0);

    // The operator's way out: an empty ledger, the indexer restarted; everything comes back from Kafka.
    await dropSchema(sys.env);
    await sys.kill("notifier-1");
    await sys.restart("notifier-1");
    await sys.kill("indexer-1");
    await sys.restart("indexer-1");
    await waitUntil(
      "publishes are acknowledged again",
      async () => {
        const more = await publish(sys.gatewayUrl, 1, `after-${Date.now()}`);
        acked.push(...more);
        return more.length > 0;
      },
      60_000,
      500,
    );
    const ids = acked.map((o) => o.eventId);
    expect(new Set(ids).size, "an eventId acknowledged twice").toBe(ids.length);
    for (const o of acked) {
      const data = expectSuccess(await getEvent(o.eventId as string), "L") as { content: string };
      expect(Buffer.from(data.content, "base64").toString("utf8"), o.eventId as string).toBe(o.content);
    }
  });
});
