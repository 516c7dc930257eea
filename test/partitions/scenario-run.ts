import type { Progress } from "@evb/devstack";
import { verifyLedger } from "../support/ledger-integrity.ts";
import { type Bed, SERVICES } from "./bed.ts";
import { callbackOrder, dataProblems, firstAfter, judgeReadiness, longestGap, type ScenarioResult } from "./judge.ts";
import type { Scenario } from "./scenarios.ts";
import { type Ack, BED_TOPICS, type CallbackReceiver, Publisher, type ReadinessProber } from "./traffic.ts";

const WARM_MS = 8_000;
const AFTER_HEAL_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (up to `timeoutMs`) until every service answers `/readyz` 200, so a scenario starts from a healthy bed. */
async function untilAllReady(bed: Bed, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let waiting: string[] = [];
  while (Date.now() < deadline) {
    waiting = [];
    for (const host of SERVICES) {
      const why = await fetch(`${bed.url(host)}/readyz`, { signal: AbortSignal.timeout(1_000) })
        .then(async (r) => (r.status === 200 ? null : `${host} not ready (${(await r.text()).slice(0, 300)})`))
        .catch((err: unknown) => `${host} not answering (${String(err)})`);
      if (why !== null) waiting.push(why);
    }
    if (waiting.length === 0) return;
    await sleep(500);
  }
  throw new Error(`the bed did not become ready within ${timeoutMs / 1000} s: ${waiting.join("; ")}`);
}

/**
 * Every acknowledged event read back on every gateway: the eventIds some gateway did not know,
 * and those some gateway answered with other content (renamed).
 */
async function readBack(bed: Bed, acks: readonly Ack[]): Promise<{ missing: Set<string>; wrong: Set<string> }> {
  const missing = new Set<string>();
  const wrong = new Set<string>();
  const queue = acks.flatMap((a) => (["gateway-1", "gateway-2"] as const).map((g) => ({ a, g })));
  const worker = async () => {
    for (let job = queue.pop(); job; job = queue.pop()) {
      const res = await fetch(`${bed.url(job.g)}/event-broker/rest/getEvent?eventId=${job.a.eventId}&groupId=1`);
      const body = (await res.json()) as { code?: number; data?: { content?: string } };
      if (body.code !== 0 || typeof body.data?.content !== "string") missing.add(job.a.eventId);
      else if (Buffer.from(body.data.content, "base64").toString("utf8") !== job.a.content) wrong.add(job.a.eventId);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return { missing, wrong };
}

/** Waits until the receiver has a callback of every acknowledged event, or the deadline passes. */
async function untilCalledBack(receiver: CallbackReceiver, acks: readonly Ack[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = new Set(receiver.deliveries.map((d) => d.eventId));
    const missing = acks.filter((a) => !got.has(a.eventId)).length;
    if (missing === 0 || Date.now() > deadline) return missing;
    await sleep(500);
  }
}

/**
 * One scenario: a healthy bed, a publish load, the fault for `faultMs`, the heal, 15 s of
 * recovery; then the verdicts. Publishing stops only after the recovery, and every lane's last
 * publish is retried until acknowledged, so every key ends with an answer.
 */
export async function runScenario(
  bed: Bed,
  receiver: CallbackReceiver,
  prober: ReadinessProber,
  scenario: Scenario,
  o: { faultMs: number; progress: Progress },
): Promise<ScenarioResult> {
  o.progress(`${scenario.name}: ${scenario.what} (${o.faultMs / 1000} s)`);
  await untilAllReady(bed, 120_000);
  // Peak resident memory per service over the scenario: a service that grows (a leak under a
  // fault) shows in the progress line before it dies of it.
  const peaks = new Map<string, number>();
  const sampleMemory = () => {
    for (const [host, mib] of bed.residentMiB()) peaks.set(host, Math.max(peaks.get(host) ?? 0, mib));
  };
  const memoryTimer = setInterval(sampleMemory, 2_000);
  memoryTimer.unref();
  const publisher = new Publisher([bed.url("gateway-1"), bed.url("gateway-2")], {
    lanes: 6,
    pauseMs: 60,
    tryTimeoutMs: 5_000,
    tag: scenario.name,
  });
  await sleep(WARM_MS);
  const faultAt = Date.now();
  const fault = await scenario.inflict(bed);
  o.progress(`${scenario.name}: ${fault.detail} at ${new Date(faultAt).toISOString()}`);
  await sleep(o.faultMs);
  const healAt = Date.now();
  await fault.heal();
  // The wall-clock time, to line up with the services' logs.
  o.progress(`${scenario.name}: healed at ${new Date(healAt).toISOString()}; ${publisher.stats.acks.length} acknowledged so far`);
  await sleep(AFTER_HEAL_MS);
  const endAt = Date.now();
  await publisher.stop();
  const { acks, renamed } = publisher.stats;
  const callbacksMissing = await untilCalledBack(receiver, acks, 90_000);

  const ledger = await verifyLedger({ databaseUrl: bed.env.DATABASE_URL as string, schema: "public" });
  const stored = new Map<string, string[]>();
  for (const e of ledger.events) {
    if (!BED_TOPICS.includes(e.topic) || !e.content.includes(`${scenario.name}-`)) continue;
    stored.set(e.content, [...(stored.get(e.content) ?? []), e.eventId]);
  }
  const back = await readBack(bed, acks);
  // Lost: not in the ledger under its own content, or not answered by some gateway.
  const lost = new Set([...acks.filter((a) => !(stored.get(a.content) ?? []).includes(a.eventId)).map((a) => a.eventId), ...back.missing]);
  const ids = new Set(acks.map((a) => a.eventId));
  const ours = receiver.deliveries.filter((d) => ids.has(d.eventId));
  const order = callbackOrder(ours.map((d) => d.eventId));
  const firstCallback = new Map<string, number>();
  for (const d of ours) if (!firstCallback.has(d.eventId)) firstCallback.set(d.eventId, d.at);
  const ackTimes = acks.map((a) => a.at);
  const cbTimes = [...firstCallback.values()];
  const outage = scenario.resumeGoalMs !== undefined;
  // In a store outage nothing can be acknowledged; the goal is a prompt resumption after it.
  const gapFrom = outage ? healAt : faultAt;
  const base = {
    scenario: scenario.name,
    acked: acks.length,
    lost: lost.size,
    renamed: renamed.length + back.wrong.size,
    duplicated: [...stored.values()].filter((v) => v.length > 1).length,
    publishGapMs: longestGap(ackTimes, gapFrom, endAt),
    callbackGapMs: longestGap(cbTimes, gapFrom, endAt),
    callbacksMissing,
    callbacksOutOfOrder: order.outOfOrder,
    callbackDuplicates: order.duplicates,
  };
  const misses: string[] = [];
  if (base.publishGapMs > 10_000) misses.push(`${(base.publishGapMs / 1000).toFixed(1)} s without an acknowledged publish (goal 10 s)`);
  if (base.callbackGapMs > scenario.callbackGoalMs) {
    misses.push(`${(base.callbackGapMs / 1000).toFixed(1)} s without a callback (goal ${scenario.callbackGoalMs / 1000} s)`);
  }
  if (outage) {
    const goal = scenario.resumeGoalMs as number;
    for (const [what, times] of [
      ["publishes", ackTimes],
      ["callbacks", cbTimes],
    ] as const) {
      const first = firstAfter(times, healAt);
      const took = first === undefined ? Number.POSITIVE_INFINITY : first - healAt;
      if (took > goal)
        misses.push(
          `${what} resumed ${Number.isFinite(took) ? `${(took / 1000).toFixed(1)} s` : "never"} after the return (goal ${goal / 1000} s)`,
        );
    }
  }
  const readiness = judgeReadiness(prober.samples, { faultAt, healAt, endAt }, fault, 2_000);
  misses.push(...readiness.map((r) => `readiness: ${r}`));
  if (ledger.problems.length > 0) misses.push(...ledger.problems.slice(0, 5).map((p) => `ledger: ${p}`));
  const result: ScenarioResult = { ...base, readiness, misses, dataProblems: [...dataProblems(base), ...ledger.problems.slice(0, 5)] };
  clearInterval(memoryTimer);
  sampleMemory();
  o.progress(`${scenario.name}: peak resident MiB ${[...peaks].map(([h, m]) => `${h} ${m}`).join(", ")}`);
  o.progress(
    `${scenario.name}: ${result.acked} acked, ${result.lost} lost, ${result.renamed} renamed; ` +
      `max ${(result.publishGapMs / 1000).toFixed(1)} s without an ack, ${(result.callbackGapMs / 1000).toFixed(1)} s without a callback; ` +
      `failed tries ${JSON.stringify(Object.fromEntries(publisher.stats.failures))}`,
  );
  return result;
}
