/**
 * STOMP and MQTT under load (issue 22, item 7), each figure next to its HTTP or callback
 * counterpart of the same run. The load comes from generator processes (protocol-publisher.ts,
 * protocol-subscriber.ts, wrk, fixed-rate.ts, receiver.ts); this process only starts them,
 * reads what they saw and checks it against the ledger.
 */
import { join } from "node:path";
import { type ScenarioContext, checkScenario, noteProblems } from "./broker-scenarios.ts";
import { arrivalsAt, subscribe } from "./callbacks.ts";
import { runJsonHelper, startHelper } from "./helper-process.ts";
import { checkLedgerByKey, readAcks, readKeyedAcks, readSendTimes } from "./ledger-check.ts";
import { CONTENT_BYTES, TOPICS } from "./plan.ts";
import type { Protocol } from "./protocol-clients.ts";
import { checkStream, deliveryLatency, latencyGoal, publishGoal } from "./protocol-figures.ts";
import type { ProtocolPublishResult, ProtocolPublishSettings } from "./protocol-publisher.ts";
import type { ProtocolLatencyRow } from "./protocol-results.ts";
import { streamScenario } from "./protocol-stream.ts";
import { protocolTarget, type SubscriberHandle, startSubscriber, waitForCounts } from "./protocol-subscribers.ts";
import { closedLoop, openLoop, openTopics } from "./publish-load.ts";

const PROTOCOLS: Protocol[] = ["stomp", "mqtt"];
const fmtRatio = (r: number | null) => (r === null ? "–" : `${r.toFixed(2)} ×`);

export async function runProtocolScenarios(ctx: ScenarioContext): Promise<void> {
  if (ctx.parts.has("protocol-publish")) await onePublisherScenario(ctx);
  if (ctx.parts.has("protocol-stream")) await streamScenario(ctx);
  if (ctx.parts.has("protocol-latency")) await latencyScenario(ctx);
}

/** (a) One connection with many publishes in flight, per protocol, against HTTP at 8 connections just before. */
async function onePublisherScenario(ctx: ScenarioContext): Promise<void> {
  const { sys, plan, result, work, say } = ctx;
  const p = plan.protocols;
  const origin = sys.origins[0] as string;
  await openTopics(origin, "pph/t");
  const http = await closedLoop(sys.origins, 8, p.publishSeconds, "pph/t", work, "pph");
  noteProblems(result, "protocol publish: HTTP closed loop 8", http.result);
  await checkScenario(ctx, "broker", "protocol publish: HTTP 8 connections", "pph/t", http.ackFiles, 8);
  say(`HTTP closed loop 8 connections (beside the protocol publishers): ${Math.round(http.result.throughput)}/s`);
  for (const protocol of PROTOCOLS) {
    const prefix = `pp${protocol[0]}/t`;
    await openTopics(origin, prefix);
    const out = join(work, `pp-${protocol}.acks`);
    const settings: ProtocolPublishSettings = {
      protocol,
      target: protocolTarget(sys),
      seconds: p.publishSeconds,
      inFlight: p.inFlight,
      topicPrefix: prefix,
      topics: TOPICS,
      contentBytes: CONTENT_BYTES,
      out,
    };
    const r = await runJsonHelper<ProtocolPublishResult>("protocol-publisher.ts", settings);
    noteProblems(result, `${protocol} one-connection publisher`, r);
    const scenario = `${protocol} one-connection publisher`;
    const ledger =
      protocol === "stomp"
        ? await checkScenario(ctx, "broker", scenario, prefix, [out], r.errors)
        : await checkLedgerByKey(ctx.pool, sys.schema, `broker ${scenario}`, prefix, readKeyedAcks(out), r.errors);
    if (protocol === "mqtt") result.ledger.push(ledger);
    const goal = publishGoal(r.throughput, http.result.throughput);
    const { throughput, latency, success, failed, errors } = r;
    result.protocols.publish.push({
      protocol,
      inFlight: p.inFlight,
      seconds: p.publishSeconds,
      throughput,
      latency,
      success,
      failed,
      errors,
      http8Throughput: http.result.throughput,
      ratio: goal.ratio,
      goalMet: goal.met,
    });
    say(
      `${protocol} one connection, ${p.inFlight} in flight: ${Math.round(throughput)} publishes/s, ${fmtRatio(goal.ratio)} HTTP at 8 connections (goal ≥ 1: ${goal.met ? "met" : "NOT met"}); ledger ${ledger.ok ? "ok" : "MISMATCH"}`,
    );
  }
}

/**
 * (c) Publishes at a fixed rate (fixed-rate.ts) to topics a callback subscription, a STOMP and
 * an MQTT subscriber all take: publish sent → arrival for each, the same publishes.
 */
async function latencyScenario(ctx: ScenarioContext): Promise<void> {
  const { sys, plan, result, work, say } = ctx;
  const p = plan.protocols;
  const origin = sys.origins[0] as string;
  await openTopics(origin, "pl/t");
  const receiver = await startHelper("receiver.ts", ["0"]);
  const hook = `http://127.0.0.1:${receiver.port}`;
  const subscription = await subscribe(`${origin}/event-m`, "pl/#", `${hook}/hook`);
  const subs: SubscriberHandle[] = [];
  try {
    for (const x of PROTOCOLS) subs.push(await startSubscriber(x, protocolTarget(sys), "pl/#"));
    const ackFile = join(work, "pl.acks");
    const r = await openLoop(sys.origins, p.latencyRate, p.latencySeconds, "pl/t", ackFile);
    noteProblems(result, `protocol latency publisher ${p.latencyRate}/s`, r);
    await checkScenario(ctx, "broker", `protocol latency ${p.latencyRate}/s`, "pl/t", [ackFile], r.errors);
    const callbackCount = async () => (await (await fetch(`${hook}/count`)).json()) as number;
    await waitForCounts([callbackCount, ...subs.map((s) => s.count)], r.success, p.drainSeconds);
    const sent = readSendTimes(ackFile);
    const acked = new Map(readAcks(ackFile).map(([topic, id]): [string, string] => [id, topic]));
    const callbacks = (await arrivalsAt(hook)).map(([, topic, id, at]): [string, string, number] => [topic, id, at]);
    const base = deliveryLatency(callbacks, sent);
    const rows: ProtocolLatencyRow[] = [{ via: "callback", delivered: callbacks.length, latency: base, p99Ratio: null, goalMet: null }];
    for (const s of subs) {
      const arrivals = await s.arrivals();
      const c = checkStream(arrivals, acked, r.errors);
      if (!c.ok) result.problems.push(`${s.protocol} subscriber at ${p.latencyRate}/s: ${JSON.stringify(c)}`);
      const latency = deliveryLatency(arrivals, sent);
      const goal = latencyGoal(latency.p99, base.p99);
      rows.push({ via: s.protocol, delivered: arrivals.length, latency, p99Ratio: goal.ratio, goalMet: goal.met });
    }
    if (callbacks.length < r.success) result.problems.push(`protocol latency: ${callbacks.length} of ${r.success} callbacks arrived`);
    result.protocols.latency = { rate: p.latencyRate, seconds: p.latencySeconds, published: r.success, rows };
    for (const x of rows)
      say(
        `publish → ${x.via} at ${p.latencyRate}/s: ${x.delivered} delivered, p50 ${x.latency.p50.toFixed(1)} p90 ${x.latency.p90.toFixed(1)} p99 ${x.latency.p99.toFixed(1)} ms${x.via === "callback" ? "" : `, p99 ${fmtRatio(x.p99Ratio)} the callbacks' (goal ≤ 1: ${x.goalMet ? "met" : "NOT met"})`}`,
      );
  } finally {
    await fetch(`${origin}/event-m/rest/unSubscribe?subscriptionId=${subscription}`).catch(() => {});
    for (const s of subs) await s.stop();
    await receiver.stop();
  }
}
