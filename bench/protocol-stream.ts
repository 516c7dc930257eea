/**
 * The `protocol-stream` scenario (issue 22, item 7; live part issue 22 leftovers): one STOMP and
 * one MQTT subscriber each receive a stream while it is published, then one more per protocol
 * reads it again afterwards (catch-up). The stream comes from STOMP publisher processes
 * (protocol-publisher.ts, many SENDs in flight each), not from this process.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type ScenarioContext, checkScenario, cpuPerPublish, noteProblems } from "./broker-scenarios.ts";
import { cpuSecondsOf } from "./bench-system.ts";
import { runJsonHelper } from "./helper-process.ts";
import { readAcks } from "./ledger-check.ts";
import { CONTENT_BYTES, TOPICS } from "./plan.ts";
import type { Protocol } from "./protocol-clients.ts";
import { checkStream, deliveryRate, rateWithin, STREAM_GOAL_PER_SEC } from "./protocol-figures.ts";
import type { ProtocolPublishResult, ProtocolPublishSettings } from "./protocol-publisher.ts";
import type { ProtocolStreamRow } from "./protocol-results.ts";
import { protocolTarget, type SubscriberHandle, startSubscriber, waitForCounts } from "./protocol-subscribers.ts";
import { openTopics } from "./publish-load.ts";
import { cpuList, ratio } from "./stats.ts";

const PROTOCOLS: Protocol[] = ["stomp", "mqtt"];
const PREFIX = "ps/t";
const BASELINE_PREFIX = "psb/t";

/** What published a stream: acknowledged events by eventId, the window, the rate, CPU per event. */
interface Stream {
  acked: Map<string, string>;
  from: number;
  to: number;
  perSec: number;
  bound: number;
  cpuMsPerEvent: Record<string, number>;
}

/**
 * `publishers` STOMP publisher processes side by side, `inFlight` SENDs each, to the topics under
 * `prefix`; every RECEIPT names its eventId, so the ledger and the subscribers are checked
 * against them. `extraUnanswered`: publishes of those topics sealed besides (the marker).
 */
async function publishStream(
  ctx: ScenarioContext,
  prefix: string,
  label: string,
  extraUnanswered: number,
  subscribers: readonly SubscriberHandle[] = [],
): Promise<Stream> {
  const { sys, plan, result, work } = ctx;
  const p = plan.protocols;
  const files = Array.from({ length: p.streamPublishers }, (_, i) => join(work, `${label.replace(/\W+/g, "-")}-${i}.acks`));
  // The broker's services, and the generators that share its cores: the subscribers and publishers.
  const generators = () => Object.fromEntries(subscribers.map((x) => [`${x.protocol} subscriber`, cpuSecondsOf(x.pid)]));
  const cpuBefore = { ...sys.cpuSeconds(), ...generators() };
  const runs = await Promise.all(
    files.map((out) => {
      const settings: ProtocolPublishSettings = {
        protocol: "stomp",
        target: protocolTarget(sys),
        seconds: p.streamSeconds,
        inFlight: p.streamInFlight,
        topicPrefix: prefix,
        topics: TOPICS,
        contentBytes: CONTENT_BYTES,
        out,
      };
      return runJsonHelper<ProtocolPublishResult>("protocol-publisher.ts", settings);
    }),
  );
  const success = runs.reduce((a, r) => a + r.success, 0);
  const publishers = { publishers: runs.reduce((a, r) => a + r.cpuMs, 0) / 1000 };
  const cpuMsPerEvent = cpuPerPublish(cpuBefore, { ...sys.cpuSeconds(), ...generators(), ...publishers }, success);
  for (const r of runs) noteProblems(result, label, r);
  const from = Math.min(...runs.map((r) => r.startedAt));
  const to = Math.max(...runs.map((r) => r.endedAt));
  // Unanswered: SENDs a publisher gave up waiting for.
  const bound = runs.reduce((a, r) => a + r.errors, 0) + extraUnanswered;
  await checkScenario(ctx, "broker", label, prefix, files, bound);
  const perSec = success / Math.max((to - from) / 1000, 0.001);
  ctx.say(`${label}: ${success} events at ${Math.round(perSec)}/s (${publisherName(ctx)}); CPU ms per event: ${cpuList(cpuMsPerEvent)}`);
  const acked = new Map(files.flatMap(readAcks).map(([topic, id]): [string, string] => [id, topic]));
  return { acked, from, to, perSec, bound, cpuMsPerEvent };
}

const publisherName = (ctx: ScenarioContext) =>
  `${ctx.plan.protocols.streamPublishers} STOMP publishers × ${ctx.plan.protocols.streamInFlight} SENDs in flight`;

/** One subscriber's verdict as a result row; a problem when it is not correct. */
async function streamRow(ctx: ScenarioContext, sub: SubscriberHandle, mode: ProtocolStreamRow["mode"], s: Stream) {
  const arrivals = await sub.arrivals();
  const c = checkStream(arrivals, s.acked, s.bound);
  const eventsPerSec = mode === "live" ? rateWithin(arrivals, s.from, s.to) : deliveryRate(arrivals);
  const { ok, acknowledged, received, duplicates, missing, misrouted, unacknowledged, outOfOrder } = c;
  if (!ok) ctx.result.problems.push(`${sub.protocol} ${mode} subscriber: ${JSON.stringify(c)}`);
  const goalMet = ok && eventsPerSec >= STREAM_GOAL_PER_SEC;
  const publishRatio = mode === "live" ? ratio(eventsPerSec, s.perSec) : null;
  ctx.say(
    `${sub.protocol} ${mode} subscriber: ${Math.round(eventsPerSec)} events/s${mode === "live" ? ` while publishing (${publishRatio?.toFixed(2)} × the publish rate)` : ""} (goal ≥ ${STREAM_GOAL_PER_SEC}: ${goalMet ? "met" : "NOT met"}), ${received} received of ${acknowledged} acknowledged; ${ok ? "every one once, in order" : `WRONG: ${missing} missing, ${duplicates} duplicates, ${outOfOrder} out of order`}`,
  );
  const row: ProtocolStreamRow = {
    protocol: sub.protocol,
    mode,
    publishedPerSec: s.perSec,
    eventsPerSec,
    publishRatio,
    catchUpRatio: null,
    goalPerSec: STREAM_GOAL_PER_SEC,
    goalMet,
    ok,
    acknowledged,
    received,
    duplicates,
    missing,
    misrouted,
    unacknowledged,
    outOfOrder,
  };
  return row;
}

/**
 * Live subscribers (subscribed before the stream) are measured inside the publishers' window;
 * then one catch-up subscriber per protocol reads the same stream alone (STOMP from the block
 * before it — a pattern cannot start after an eventId, 100302 as in the original —, MQTT by
 * resuming a persistent session subscribed before it), which is the delivery path's own rate and
 * the live rows' same-run baseline.
 */
export async function streamScenario(ctx: ScenarioContext): Promise<void> {
  const { sys, plan, result } = ctx;
  const p = plan.protocols;
  const origin = sys.origins[0] as string;
  await openTopics(origin, PREFIX);
  // Sealed before the stream, in a block of its own: the STOMP catch-up reads the blocks after it.
  const markerHeight = (await publishOne(origin, `${PREFIX}0`)).split("-")[2] ?? "";
  const target = protocolTarget(sys);
  const clientId = `bench-catch-up-${randomBytes(4).toString("hex")}`;
  const live: SubscriberHandle[] = [];
  const catchUp: SubscriberHandle[] = [];
  try {
    // The same-run baseline: the same publishers with no subscriber, to topics nobody takes.
    await openTopics(origin, BASELINE_PREFIX);
    const alone = await publishStream(ctx, BASELINE_PREFIX, "protocol stream, no subscriber", 0);
    for (const x of PROTOCOLS) live.push(await startSubscriber(x, target, "ps/#"));
    for (const x of PROTOCOLS) catchUp.push(await startSubscriber(x, target, "ps/#", { afterHeight: markerHeight, clientId }));
    const stream = await publishStream(ctx, PREFIX, "protocol stream, live", 1, live);
    await waitForCounts(
      live.map((s) => s.count),
      stream.acked.size,
      p.drainSeconds,
    );
    const rows: ProtocolStreamRow[] = [];
    for (const s of live) rows.push(await streamRow(ctx, s, "live", stream));
    for (const s of catchUp) {
      await s.resume();
      await waitForCounts([s.count], stream.acked.size, p.drainSeconds);
      rows.push(await streamRow(ctx, s, "catch-up", stream));
    }
    for (const r of rows) {
      const base = rows.find((x) => x.mode === "catch-up" && x.protocol === r.protocol);
      if (r.mode === "live" && base) r.catchUpRatio = ratio(r.eventsPerSec, base.eventsPerSec);
    }
    result.protocols.stream.push(...rows);
    result.protocols.streamLoad = {
      publisher: publisherName(ctx),
      publishedAlonePerSec: alone.perSec,
      cpuMsPerEvent: stream.cpuMsPerEvent,
      cpuMsPerEventAlone: alone.cpuMsPerEvent,
    };
  } finally {
    for (const s of [...live, ...catchUp]) await s.stop();
  }
}

/** One publish over HTTP, sealed; its eventId. */
async function publishOne(origin: string, topic: string): Promise<string> {
  const body = new URLSearchParams({ topic, content: "marker" });
  const r = (await (await fetch(`${origin}/event-broker/rest/publish`, { method: "POST", body })).json()) as {
    status?: string;
    eventId?: string;
  };
  if (r.status !== "SUCCESS" || !r.eventId) throw new Error(`marker publish failed: ${JSON.stringify(r)}`);
  return r.eventId;
}
