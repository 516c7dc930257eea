/** The scenarios run against one broker system, each followed by its correctness check. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type pg from "pg";
import type { BenchSystem } from "./bench-system.ts";
import { runCallbacks, runSlowReceiver } from "./callbacks.ts";
import { startHelper } from "./helper-process.ts";
import { checkLedger, type LedgerCheck, readAcks } from "./ledger-check.ts";
import type { BenchPlan, Part } from "./plan.ts";
import { closedLoop, openLoop, openTopics } from "./publish-load.ts";
import type { BenchResult, System } from "./results.ts";
import { cpuList, type Latency } from "./stats.ts";
import { runWrk } from "./wrk-runner.ts";

export interface ScenarioContext {
  sys: BenchSystem;
  pool: pg.Pool;
  plan: BenchPlan;
  /** The parts this run measures (`--only`). */
  parts: ReadonlySet<Part>;
  result: BenchResult;
  /** A scratch folder for answer files. */
  work: string;
  say: (m: string) => void;
  /** The 2-gateway, 2-indexer system: publish figures only. */
  scaled: boolean;
  /** Bare servers measured right after the broker at each load, so that load from elsewhere hits both alike. */
  baselines: Baseline[];
}

export interface Baseline {
  system: "node-http" | "express";
  origin: string;
}

const figures = (r: { throughput: number; latency: Latency; success: number; failed: number; errors: number }) => ({
  throughput: r.throughput,
  latency: r.latency,
  success: r.success,
  failed: r.failed,
  errors: r.errors,
});
const fmt = (l: { p50: number; p99: number; max: number }) => `p50 ${l.p50.toFixed(1)} p99 ${l.p99.toFixed(1)} max ${l.max.toFixed(1)} ms`;

/** Answer epoch ms by event id, from a fixed-rate.ts answer file. */
function answerTimes(file: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const [, eventId, at] = line.split("\t");
    if (eventId && at) m.set(eventId, Number(at));
  }
  return m;
}

interface Answers {
  failed: number;
  errors: number;
  failSample: string;
}

export function noteProblems(result: BenchResult, what: string, r: Answers): void {
  if (r.failed) result.problems.push(`${what}: ${r.failed} non-SUCCESS answer(s), first: ${r.failSample}`);
  // Overload, not a wrong answer: the ledger check still accounts for these publishes.
  if (r.errors) result.warnings.push(`${what}: ${r.errors} request(s) without an answer within 10 s or cut off`);
}

/** The ledger holds exactly what the scenario's answer files acknowledged (at most `bound` more in flight). */
export async function checkScenario(
  ctx: ScenarioContext,
  system: System,
  scenario: string,
  prefix: string,
  files: string[],
  bound: number,
): Promise<LedgerCheck> {
  const c = await checkLedger(ctx.pool, ctx.sys.schema, `${system} ${scenario}`, prefix, files.flatMap(readAcks), bound);
  ctx.result.ledger.push(c);
  if (!c.ok) ctx.say(`LEDGER MISMATCH after ${scenario}: ${JSON.stringify(c)}`);
  return c;
}

/** CPU ms per publish of each service between two `cpuSeconds()` readings. */
export function cpuPerPublish(before: Record<string, number>, after: Record<string, number>, publishes: number): Record<string, number> {
  if (publishes <= 0) return {};
  return Object.fromEntries(Object.entries(after).map(([name, s]) => [name, ((s - (before[name] ?? 0)) * 1000) / publishes]));
}

export async function runBrokerScenarios(ctx: ScenarioContext): Promise<void> {
  const { sys, plan, result, work, say } = ctx;
  const system: System = ctx.scaled ? "broker-2x2" : "broker";
  const origin = sys.origins[0] as string;
  const check = (scenario: string, prefix: string, files: string[], bound: number) =>
    checkScenario(ctx, system, scenario, prefix, files, bound);
  const problems = (what: string, r: Answers) => noteProblems(result, what, r);

  await openTopics(origin, "warm/t");
  const warm = await closedLoop(sys.origins, 32, plan.warmUpSeconds, "warm/t");
  say(`${system} warmed up: ${Math.round(warm.result.throughput)}/s over ${plan.warmUpSeconds} s (not recorded)`);

  let readIds: string[] = [];
  for (const c of ctx.scaled ? plan.scaled.connections : plan.connections) {
    const prefix = `c${c}/t`;
    await openTopics(origin, prefix);
    const cpuBefore = sys.cpuSeconds();
    const { result: r, ackFiles } = await closedLoop(sys.origins, c, plan.closedSeconds, prefix, work, `${system}-c${c}`);
    const cpuMsPerPublish = cpuPerPublish(cpuBefore, sys.cpuSeconds(), r.success);
    const { throughput, latency, success, failed, errors } = r;
    result.closedLoop.push({
      system,
      connections: c,
      seconds: plan.closedSeconds,
      throughput,
      latency,
      success,
      failed,
      errors,
      cpuMsPerPublish,
    });
    problems(`${system} closed loop ${c}`, r);
    const l = await check(`closed loop ${c}`, prefix, ackFiles, c);
    const cpu = cpuList(cpuMsPerPublish);
    say(
      `${system} closed loop ${c} connections: ${Math.round(throughput)}/s, ${fmt(latency)}; ledger ${l.ok ? "ok" : "MISMATCH"}; CPU ms per publish: ${cpu}`,
    );
    if (c === plan.getEvent.connections || readIds.length === 0) readIds = ackFiles;
    if (ctx.scaled) continue;
    for (const b of ctx.baselines) {
      const { result: x } = await closedLoop([b.origin], c, plan.baselineSeconds, "bench/t");
      result.closedLoop.push({ system: b.system, connections: c, seconds: plan.baselineSeconds, ...figures(x) });
      say(`baseline ${b.system} closed loop ${c} connections: ${Math.round(x.throughput)}/s, ${fmt(x.latency)}`);
    }
  }
  for (const rate of ctx.scaled ? plan.scaled.openRates : plan.openRates) {
    const prefix = `o${rate}/t`;
    await openTopics(origin, prefix);
    const file = join(work, `${system}-o${rate}.acks`);
    const r = await openLoop(sys.origins, rate, plan.openSeconds, prefix, file);
    const { throughput, latency, success, failed, errors } = r;
    result.openLoop.push({ system, rate, seconds: plan.openSeconds, throughput, latency, success, failed, errors });
    problems(`${system} open loop ${rate}/s`, r);
    const l = await check(`open loop ${rate}/s`, prefix, [file], r.errors);
    say(`${system} open loop ${rate}/s: ${Math.round(throughput)}/s answered, ${fmt(latency)}; ledger ${l.ok ? "ok" : "MISMATCH"}`);
    if (ctx.scaled) continue;
    for (const b of ctx.baselines.filter((x) => x.system === "node-http")) {
      const x = await openLoop([b.origin], rate, plan.openSeconds, "bench/t");
      result.openLoop.push({ system: b.system, rate, seconds: plan.openSeconds, ...figures(x) });
      say(`baseline ${b.system} open loop ${rate}/s: ${fmt(x.latency)}`);
    }
  }
  if (ctx.scaled) return;

  if (ctx.parts.has("get")) await readEvents(ctx, readIds);
  if (ctx.parts.has("batch") && !ctx.scaled) await batchScenario(ctx);
  if (ctx.parts.has("callbacks")) await callbackScenarios(ctx);
  if (ctx.parts.has("slow")) await slowReceiver(ctx);
}

/** Connections and batch size of the batch-versus-single comparison. */
const BATCH_CONNECTIONS = 8;
const BATCH_SIZE = 100;

/** The same load as single publishes and as batches of BATCH_SIZE over BATCH_CONNECTIONS connections, each checked against the ledger. */
async function batchScenario(ctx: ScenarioContext): Promise<void> {
  const { sys, plan, result, work, say } = ctx;
  const origin = sys.origins[0] as string;
  const c = BATCH_CONNECTIONS;
  const run = async (label: string, batch?: number) => {
    const prefix = `${label}/t`;
    await openTopics(origin, prefix);
    const { result: r, ackFiles } = await closedLoop([origin], c, plan.closedSeconds, prefix, work, `broker-${label}`, batch);
    noteProblems(result, `broker ${label}`, r);
    const l = await checkScenario(ctx, "broker", label, prefix, ackFiles, c * (batch ?? 1));
    say(
      `broker ${label} ${c} connections: ${Math.round(r.throughput)} events/s, ${fmt(r.latency)} per request; ledger ${l.ok ? "ok" : "MISMATCH"}`,
    );
    return r;
  };
  const single = await run("batch-single");
  const batched = await run("batch-100", BATCH_SIZE);
  result.batchPublish = {
    connections: c,
    batchSize: BATCH_SIZE,
    seconds: plan.closedSeconds,
    single: { eventsPerSec: single.throughput, latency: single.latency },
    batched: { eventsPerSec: batched.throughput, requestsPerSec: batched.requestsPerSec, latency: batched.latency },
  };
  say(`batch publish: ${(batched.throughput / Math.max(1, single.throughput)).toFixed(1)}× the events/s of single publishes`);
}

async function readEvents(ctx: ScenarioContext, readIds: string[]): Promise<void> {
  const { sys, plan, result, work, say } = ctx;
  const system: System = "broker";
  const origin = sys.origins[0] as string;
  const ids = join(work, "read.ids");
  writeFileSync(ids, readIds.map((f) => readFileSync(f, "utf8")).join(""));
  const g = await runWrk({
    url: `${origin}/event-broker/rest/getEvent`,
    connections: plan.getEvent.connections,
    seconds: plan.getEvent.seconds,
    env: { BENCH_MODE: "get", BENCH_PATH: "/event-broker/rest/getEvent", BENCH_IDS: ids },
  });
  result.getEvent = {
    system,
    connections: plan.getEvent.connections,
    throughput: g.throughput,
    latency: g.latency,
    success: g.success,
    failed: g.failed,
    errors: g.errors,
  };
  noteProblems(result, "getEvent", g);
  say(`getEvent ${plan.getEvent.connections} connections: ${Math.round(g.throughput)} reads/s, ${fmt(g.latency)}`);
}

async function callbackScenarios(ctx: ScenarioContext): Promise<void> {
  const { sys, plan, result, work, say } = ctx;
  const origin = sys.origins[0] as string;
  const receiver = await startHelper("receiver.ts", ["0"]);
  try {
    for (const [i, cb] of plan.callbacks.entries()) {
      const tag = `cb${i}`;
      const ackFile = join(work, `${tag}.acks`);
      const run = { origin, receiver: `http://127.0.0.1:${receiver.port}`, tag, ackFile, ...cb };
      const cpuBefore = sys.cpuSeconds();
      const { figures, published } = await runCallbacks(run, plan.callbackDrainSeconds, answerTimes);
      figures.cpuMsPerCallback = cpuPerPublish(cpuBefore, sys.cpuSeconds(), figures.delivered);
      result.callbacks.push(figures);
      noteProblems(result, `callbacks ${cb.subscriptions} × ${cb.rate}/s`, published);
      if (figures.delivered < figures.expected) {
        result.problems.push(
          `callbacks ${cb.subscriptions} × ${cb.rate}/s: ${figures.delivered} of ${figures.expected} arrived within ${plan.callbackDrainSeconds} s`,
        );
      }
      await checkScenario(ctx, "broker", `callbacks ${cb.subscriptions} × ${cb.rate}/s`, `${tag}/`, [ackFile], published.errors);
      say(
        `callbacks ${cb.subscriptions} subscription(s) × ${cb.rate}/s: ${figures.delivered}/${figures.expected} delivered, ${Math.round(figures.callbacksPerSec)}/s, ${fmt(figures.latency)}; CPU ms per callback: ${cpuList(figures.cpuMsPerCallback)}`,
      );
    }
  } finally {
    await receiver.stop();
  }
}

/**
 * One subscription whose receiver takes plan.slowReceiver.delayMs per callback. With `window`,
 * the system's notifier runs with that DELIVERY_WINDOW and the figure is recorded apart.
 */
export async function slowReceiver(ctx: ScenarioContext, window?: number): Promise<void> {
  const { sys, plan, result, say } = ctx;
  const origin = sys.origins[0] as string;
  const slow = await startHelper("receiver.ts", [String(plan.slowReceiver.delayMs)]);
  try {
    const s = plan.slowReceiver;
    const run = {
      origin,
      receiver: `http://127.0.0.1:${slow.port}`,
      tag: "slow",
      ackFile: join(ctx.work, "slow.acks"),
      subscriptions: 1,
      ...s,
    };
    const f = await runSlowReceiver(run, s.delayMs);
    const label = window === undefined ? "slow receiver" : `slow receiver, DELIVERY_WINDOW=${window}`;
    if (window === undefined) result.slowReceiver = f;
    else result.slowReceiverWindowed = { window, ...f };
    if (f.orderViolations) result.problems.push(`${label}: ${f.orderViolations} callbacks out of order`);
    say(`${label} (${s.delayMs} ms each): ${Math.round(f.callbacksPerSec)} callbacks/s, ${f.orderViolations} out of order`);
  } finally {
    await slow.stop();
  }
}
