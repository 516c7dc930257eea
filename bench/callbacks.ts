/** The publish→callback scenarios of `npm run bench`: subscriptions on a pattern, publishes at a fixed rate, arrivals at a receiver process. */
import type { FixedRateSettings } from "./fixed-rate.ts";
import { runJsonHelper } from "./helper-process.ts";
import type { CallbackFigures, SlowReceiverFigures } from "./results.ts";
import { type Latency, latencyOf } from "./stats.ts";

/** [subscriptionId, topic, eventId, arrival epoch ms], as the receiver reports them. */
export type Arrival = [string, string, string, number];

export interface FixedRateResult {
  sent: number;
  success: number;
  failed: number;
  failSample: string;
  errors: number;
  throughput: number;
  epochStart: number;
  latency: Latency;
  sketch: { count: number; q: number[] };
}

/** Answer → arrival times, ms, of the arrivals whose publish answer is known (acks: eventId → answer epoch ms). */
export function callbackLatencies(arrivals: readonly Arrival[], acks: ReadonlyMap<string, number>): number[] {
  const out: number[] = [];
  for (const [, , eventId, at] of arrivals) {
    const answered = acks.get(eventId);
    if (answered !== undefined) out.push(at - answered);
  }
  return out;
}

/**
 * First arrivals that came after a later event of the same subscription and topic (event ids
 * are hash-seq-block). A repeat of an event that already arrived (at-least-once: re-sent after a
 * crash, or after a failed earlier event with DELIVERY_WINDOW above 1) is a duplicate, which
 * receivers drop by webhook-id, not a violation.
 */
export function orderViolations(arrivals: readonly Arrival[]): number {
  const last = new Map<string, number>();
  const seen = new Set<string>();
  let bad = 0;
  for (const [sub, topic, eventId] of arrivals) {
    const seq = Number(eventId.split("-")[1]);
    const key = `${sub}\u0000${topic}`;
    if (seen.has(`${key}\u0000${eventId}`)) continue;
    seen.add(`${key}\u0000${eventId}`);
    if (seq < (last.get(key) ?? 0)) bad++;
    else last.set(key, seq);
  }
  return bad;
}

export interface CallbackRun {
  /** Gateway origin, e.g. http://127.0.0.1:1234 */
  origin: string;
  receiver: string;
  tag: string;
  subscriptions: number;
  rate: number;
  seconds: number;
  ackFile: string;
}

/** A callback subscription on `pattern` at the M mount `m` posting to `url`; its id. */
export async function subscribe(m: string, pattern: string, url: string): Promise<string> {
  const r = await fetch(`${m}/rest/subscribe`, { method: "POST", body: new URLSearchParams({ topic: pattern, url }) });
  const id = (await r.text()).replace(/"/g, "");
  if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error(`subscribe failed: ${id}`);
  return id;
}

export async function arrivalsAt(receiver: string): Promise<Arrival[]> {
  return (await (await fetch(`${receiver}/arrivals`)).json()) as Arrival[];
}

/** Subscribes, publishes at the fixed rate, and returns the generator's result with the receiver's arrivals so far. */
async function publishTo(run: CallbackRun, topics: number, waitFor: (published: FixedRateResult) => Promise<void>) {
  const m = `${run.origin}/event-m`;
  await fetch(`${run.receiver}/reset`, { method: "POST" });
  for (let i = 0; i < topics; i++) await fetch(`${m}/rest/open?topic=${encodeURIComponent(`${run.tag}/t${i}`)}`);
  const ids: string[] = [];
  for (let s = 0; s < run.subscriptions; s++) ids.push(await subscribe(m, `${run.tag}/#`, `${run.receiver}/hook`));
  const settings: FixedRateSettings = {
    targets: [new URL(run.origin).host],
    path: "/event-m/rest/publish",
    rate: run.rate,
    seconds: run.seconds,
    topicPrefix: `${run.tag}/t`,
    topics,
    contentBytes: 256,
    maxConnections: 64,
    out: run.ackFile,
  };
  const published = await runJsonHelper<FixedRateResult>("fixed-rate.ts", settings);
  await waitFor(published);
  const arrivals = await arrivalsAt(run.receiver);
  for (const id of ids) await fetch(`${m}/rest/unSubscribe?subscriptionId=${id}`);
  return { published, arrivals };
}

export async function runCallbacks(
  run: CallbackRun,
  drainSeconds: number,
  readAnswers: (file: string) => Map<string, number>,
): Promise<{ figures: CallbackFigures; published: FixedRateResult }> {
  let expected = 0;
  const { published, arrivals } = await publishTo(run, 16, async (p) => {
    expected = p.success * run.subscriptions;
    const deadline = Date.now() + drainSeconds * 1000;
    while (Date.now() < deadline) {
      if (((await (await fetch(`${run.receiver}/count`)).json()) as number) >= expected) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  const answers = readAnswers(run.ackFile);
  const lastAt = Math.max(...arrivals.map((a) => a[3]), published.epochStart);
  return {
    published,
    figures: {
      subscriptions: run.subscriptions,
      rate: run.rate,
      seconds: run.seconds,
      expected,
      delivered: arrivals.length,
      callbacksPerSec: arrivals.length / Math.max(0.001, (lastAt - published.epochStart) / 1000),
      latency: latencyOf(callbackLatencies(arrivals, answers)),
    },
  };
}

/** One subscription whose receiver takes `delayMs` per callback: the callbacks/s it gets while publishes come at `rate`. */
export async function runSlowReceiver(run: CallbackRun, delayMs: number): Promise<SlowReceiverFigures> {
  const { arrivals } = await publishTo(run, 4, async () => {});
  const times = arrivals.map((a) => a[3]);
  const span = times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  return {
    delayMs,
    seconds: run.seconds,
    delivered: arrivals.length,
    callbacksPerSec: span > 0 ? (arrivals.length - 1) / span : 0,
    orderViolations: orderViolations(arrivals),
  };
}
