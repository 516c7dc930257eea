/**
 * `npm run test:partitions`: the multi-host test bed (see docs/deployment.md, "What survives
 * what"). Starts twelve hosts as network namespaces, runs every fault scenario against a steady
 * publish and callback load, verifies the ledger, every acknowledged event on every gateway and
 * every callback, and prints the table. Exits 1 when a data goal breaks (anything acknowledged
 * lost, renamed or stored twice, a callback missing or out of order) or the bed fails; with
 * `--strict`, also when an availability or readiness goal is missed.
 *
 *   npm run test:partitions [-- --only name,name] [--fault-seconds 30] [--strict] [--keep] [--set KEY=VALUE…]
 *
 * `--set` gives every service one more setting, `--broker-session-ms` the brokers another session
 * (to measure a setting's effect on the bed).
 *
 * `--keep` leaves the bed running after the scenarios (to look around: `ip netns exec evbp-<host>
 * …`, psql to 10.77.0.10) until Ctrl-C.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Bed, SERVICES, type ServiceHost } from "./bed.ts";
import { formatTable, type ScenarioResult } from "./judge.ts";
import { SCENARIOS } from "./scenarios.ts";
import { runScenario } from "./scenario-run.ts";
import { BED_TOPICS, CallbackReceiver, ReadinessProber } from "./traffic.ts";

const { values } = parseArgs({
  options: {
    only: { type: "string" },
    "fault-seconds": { type: "string", default: "30" },
    strict: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    set: { type: "string", multiple: true, default: [] },
    "broker-session-ms": { type: "string" },
  },
});
const started = Date.now();
const progress = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const only = values.only?.split(",");
const chosen = SCENARIOS.filter((s) => !only || only.includes(s.name));
if (chosen.length === 0) throw new Error(`no scenario named ${values.only}; there are ${SCENARIOS.map((s) => s.name).join(", ")}`);
const faultMs = Number(values["fault-seconds"]) * 1000;

const env = Object.fromEntries(values.set.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const brokerSession = values["broker-session-ms"] === undefined ? {} : { brokerSessionMs: Number(values["broker-session-ms"]) };
const bed = new Bed({ dir: join(import.meta.dirname, "..", "..", ".cache"), progress, env, ...brokerSession });
const receiver = new CallbackReceiver();
let stopping: Promise<void> | undefined;
const shutdown = () => {
  stopping ??= (async () => {
    progress("bed: stopping every process and removing the namespaces…");
    await receiver.stop().catch(() => {});
    await bed.stop();
  })();
  return stopping;
};
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    void shutdown().finally(() => process.exit(130));
  });
}

async function setUp(): Promise<void> {
  await bed.start();
  const gw = bed.url("gateway-1");
  const url = await receiver.start(bed.net.clientIp);
  for (const topic of BED_TOPICS) {
    const open = await fetch(`${gw}/event-broker/rest/open?topic=${topic}&groupId=1`);
    if (open.status !== 200) throw new Error(`opening ${topic} answered ${open.status}: ${await open.text()}`);
    const sub = await fetch(`${gw}/event-m/rest/subscribe?${new URLSearchParams({ topic, url, groupId: "1" })}`);
    if (sub.status !== 200) throw new Error(`subscribing ${url} to ${topic} answered ${sub.status}: ${await sub.text()}`);
  }
  progress(`bed: ready; ${BED_TOPICS.length} topics, each called back at ${url}`);
}

let failed = false;
const results: ScenarioResult[] = [];
try {
  await setUp();
  const targets = new Map<ServiceHost, string>(SERVICES.map((h) => [h, bed.url(h)]));
  for (const scenario of chosen) {
    const prober = new ReadinessProber(targets);
    try {
      results.push(await runScenario(bed, receiver, prober, scenario, { faultMs: scenario.faultMs ?? faultMs, progress }));
    } finally {
      prober.stop();
    }
    const died = bed.exited();
    if (died.length > 0) {
      for (const host of died) console.error(bed.deathNote(host));
      throw new Error(`${died.join(", ")} exited during ${scenario.name}; see ${bed.logDir}`);
    }
  }
} catch (err) {
  failed = true;
  console.error(`test:partitions: ${(err as Error).stack ?? String(err)}`);
} finally {
  if (values.keep) {
    progress("bed: kept running (--keep); Ctrl-C stops it");
    await new Promise(() => {});
  }
  await shutdown();
}

const table = formatTable(results);
console.log(`\n${table}\n`);
const broken = results.flatMap((r) => r.dataProblems.map((p) => `${r.scenario}: ${p}`));
const missed = results.flatMap((r) => r.misses.map((p) => `${r.scenario}: ${p}`));
for (const p of broken) console.log(`DATA GOAL BROKEN  ${p}`);
for (const p of missed) console.log(`GOAL MISSED       ${p}`);
writeFileSync(join(bed.logDir, "..", "report.md"), `${table}\n\n${[...broken, ...missed].join("\n")}\n`);
progress(`report in ${join(bed.logDir, "..", "report.md")}; service logs in ${bed.logDir}`);
if (failed || broken.length > 0 || (values.strict && missed.length > 0)) process.exit(1);
process.exit(0);
