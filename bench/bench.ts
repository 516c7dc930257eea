/**
 * `npm run bench [-- --quick | --full]`: the broker under load from an external generator, with
 * same-run baselines. wrk (C, Debian package `wrk`) drives the closed loops and reads; the
 * open-loop, fixed-rate publishes come from bench/fixed-rate.ts in its own process. Baselines:
 * a bare node:http server, a bare express 5 route, and the Kafka client producing the same records.
 * STOMP and MQTT (protocol-scenarios.ts) are driven by stompjs and mqtt.js in generator processes
 * of their own (protocol-publisher.ts, protocol-subscriber.ts).
 * Checks every answer was SUCCESS, every callback arrived and the ledger holds exactly what was
 * acknowledged; writes bench/results/<mode>-<time>.{json,svg,md}; exits 1 on a correctness problem.
 * Stack: KAFKA_BROKERS / DATABASE_URL / REDIS_URL when set, else its own Kafka on a free port and
 * the local Postgres and Redis; each broker it starts has its own schema, topic and Redis prefix.
 * BENCH_NOTE is written into the result (e.g. "shared, loaded machine").
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import type { Stack } from "@evb/devstack";
import { type BenchSystem, startBenchStack, startBenchSystem } from "./bench-system.ts";
import { type Baseline, runBrokerScenarios, slowReceiver } from "./broker-scenarios.ts";
import { throughputChart } from "./chart.ts";
import { type Helper, startHelper } from "./helper-process.ts";
import { kafkaBaseline } from "./kafka-baseline.ts";
import { benchPlan, CONTENT_BYTES, narrowPlan, TOPICS } from "./plan.ts";
import { emptyProtocolResults } from "./protocol-results.ts";
import { runProtocolScenarios } from "./protocol-scenarios.ts";
import { type BenchResult, renderTables } from "./results.ts";
import { ensureWrk } from "./wrk-runner.ts";

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    full: { type: "boolean", default: false },
    only: { type: "string" },
    connections: { type: "string" },
    rates: { type: "string" },
    callbacks: { type: "string" },
  },
});
let narrowed: ReturnType<typeof narrowPlan>;
try {
  narrowed = narrowPlan(benchPlan(args.quick && !args.full ? "quick" : "full"), args);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
const { plan, parts, partial } = narrowed;
const started = Date.now();
const say = (m: string) => process.stdout.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${m}\n`);

const result: BenchResult = {
  version: 1,
  mode: plan.mode,
  startedAt: new Date().toISOString(),
  finishedAt: "",
  machine: {
    nproc: cpus().length,
    memTotalGiB: Math.floor(totalmem() / 2 ** 30), // as `free -g` shows it
    loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
    cpu: cpus()[0]?.model ?? "",
    node: process.version,
    note: process.env.BENCH_NOTE ?? "",
  },
  settings: {
    contentBytes: CONTENT_BYTES,
    topics: TOPICS,
    closedLoopGenerator: "wrk (bench/wrk/load.lua)",
    openLoopGenerator: "bench/fixed-rate.ts (own process, latency from due time)",
  },
  closedLoop: [],
  openLoop: [],
  kafka: { records: 0, recordsPerSec: 0, batch: 500 },
  callbacks: [],
  slowReceiver: null,
  slowReceiverWindowed: null,
  getEvent: null,
  batchPublish: null,
  peakRssMiB: {},
  protocols: emptyProtocolResults(),
  ledger: [],
  problems: [],
  warnings: [],
};

say(
  `${partial ? `partial (${[...parts].join(", ")}) ` : ""}${plan.mode} mode on ${result.machine.nproc} cores, load average ${result.machine.loadAverage.join(" ")}`,
);
ensureWrk(say);
const work = mkdtempSync(join(tmpdir(), "evb-bench-"));
const helpers: Helper[] = [];
const systems: BenchSystem[] = [];
let stack: Stack | undefined;
let pool: pg.Pool | undefined;
let cleaning: Promise<void> | undefined;
/** Stops what this run started (services run in their own process groups, so Ctrl-C does not reach them) and drops its schemas. */
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const h of helpers) await h.stop();
    for (const s of systems) await s.stop();
    for (const s of systems) await s.dropData(say);
    await pool?.end();
    await stack?.stop();
    rmSync(work, { recursive: true, force: true });
  })());
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping what the bench started…`);
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  stack = await startBenchStack();
  pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });

  const baselines: Baseline[] = [];
  for (const system of ["node-http", "express"] as const) {
    const h = await startHelper("baseline-server.ts", [system === "node-http" ? "http" : "express"]);
    helpers.push(h);
    baselines.push({ system, origin: `http://127.0.0.1:${h.port}` });
  }
  if (parts.has("kafka"))
    result.kafka = await kafkaBaseline(stack.kafkaBrokers.split(","), {
      records: plan.kafkaRecords,
      batch: 500,
      contentBytes: CONTENT_BYTES,
      topics: TOPICS,
    });
  if (parts.has("kafka")) say(`baseline Kafka producer (@platformatic/kafka): ${Math.round(result.kafka.recordsPerSec)} records/s`);

  for (const [label, gateways, indexers] of [
    ["1x1", 1, 1],
    ["2x2", 2, 2],
  ] as const) {
    if (label === "2x2" && !parts.has("scaled")) continue;
    say(`starting a broker with ${gateways} gateway(s), ${indexers} indexer(s) and a notifier…`);
    const sys = await startBenchSystem(stack, { gateways, indexers, notifiers: 1 });
    systems.push(sys);
    say(`broker ${label} up: gateways ${sys.origins.join(", ")}, Postgres schema ${sys.schema} (removed at the end with its Redis keys)`);
    const ctx = { sys, pool, plan, parts, result, work, say, scaled: label === "2x2", baselines };
    await runBrokerScenarios(ctx);
    if (label === "1x1") await runProtocolScenarios(ctx);
    for (const [name, mib] of Object.entries(sys.peakRssMiB())) result.peakRssMiB[`${label} ${name}`] = mib;
    await sys.stop();
  }
  if (parts.has("slow")) {
    // The in-flight window is a notifier setting (default 1, strict order): measured on a broker of its own.
    const window = 32;
    say(`starting a broker whose notifier has DELIVERY_WINDOW=${window}…`);
    const sys = await startBenchSystem(stack, { gateways: 1, indexers: 1, notifiers: 1, env: { DELIVERY_WINDOW: String(window) } });
    systems.push(sys);
    await slowReceiver({ sys, pool, plan, parts, result, work, say, scaled: false, baselines }, window);
    await sys.stop();
  }
} finally {
  await cleanUp();
}

result.finishedAt = new Date().toISOString();
for (const l of result.ledger) if (!l.ok) result.problems.push(`ledger mismatch in ${l.scenario}: ${JSON.stringify(l)}`);
const dir = join(import.meta.dirname, "results");
mkdirSync(dir, { recursive: true });
// A partial run (--only, --connections, --rates, --callbacks) measures one change; it is not the published table.
const base = join(dir, `${partial ? "partial-" : ""}${plan.mode}-${result.startedAt.slice(0, 19).replace(/[:T]/g, "-")}`);
const tables = renderTables(result);
writeFileSync(`${base}.json`, `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(`${base}.svg`, throughputChart(result));
writeFileSync(`${base}.md`, `# Bench ${plan.mode} ${result.startedAt}\n\n${tables}\n`);
process.stdout.write(`\n${tables}\n\nwritten: ${base}.{json,svg,md} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
if (result.problems.length) {
  process.stderr.write(`\nINCORRECT: ${result.problems.join("\n")}\n`);
  process.exitCode = 1;
}
