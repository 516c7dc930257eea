/** The STOMP and MQTT figures of a bench result (issue 22, item 7) and their Markdown tables. */
import { z } from "zod";
import { cpuList, type Latency } from "./stats.ts";

const LatencyFigures = z.object({ p50: z.number(), p90: z.number(), p99: z.number(), max: z.number() }) satisfies z.ZodType<Latency>;
const ProtocolName = z.enum(["stomp", "mqtt"]);

const PublishRow = z.object({
  protocol: ProtocolName,
  inFlight: z.number().int(),
  seconds: z.number(),
  /** Sealed answers (RECEIPT / PUBACK) per second on the one connection. */
  throughput: z.number(),
  /** Send → RECEIPT / PUBACK, ms. */
  latency: LatencyFigures,
  success: z.number().int(),
  failed: z.number().int(),
  errors: z.number().int(),
  /** The HTTP closed loop at 8 connections (wrk), run just before in the same run. */
  http8Throughput: z.number(),
  /** throughput ÷ http8Throughput; the goal is at least 1. */
  ratio: z.number().nullable(),
  goalMet: z.boolean(),
});

const StreamRow = z.object({
  protocol: ProtocolName,
  /** live: subscribed before the stream was published; catch-up: read the whole stream after it was published. */
  mode: z.enum(["live", "catch-up"]),
  /** The stream's acknowledged publishes per second (its publishers' window). */
  publishedPerSec: z.number(),
  /** live: deliveries per second inside the publishers' window; catch-up: first arrival to last. */
  eventsPerSec: z.number(),
  /** live: eventsPerSec ÷ publishedPerSec (1: it kept up); catch-up: null. */
  publishRatio: z.number().nullable().default(null),
  /** live: eventsPerSec ÷ the same protocol's catch-up rate of the same run (the delivery path alone). */
  catchUpRatio: z.number().nullable().default(null),
  goalPerSec: z.number(),
  goalMet: z.boolean(),
  acknowledged: z.number().int(),
  received: z.number().int(),
  duplicates: z.number().int(),
  missing: z.number().int(),
  misrouted: z.number().int(),
  unacknowledged: z.number().int(),
  outOfOrder: z.number().int(),
  /** Every acknowledged event exactly once, under its topic, in ledger order. */
  ok: z.boolean(),
});

const LatencyRow = z.object({
  via: z.enum(["callback", "stomp", "mqtt"]),
  delivered: z.number().int(),
  /** Publish sent → delivery arrival, ms. */
  latency: LatencyFigures,
  /** p99 ÷ the callbacks' p99 (protocol rows); the goal is at most 1. */
  p99Ratio: z.number().nullable(),
  goalMet: z.boolean().nullable(),
});

export const ProtocolResultsSchema = z.object({
  publish: z.array(PublishRow),
  stream: z.array(StreamRow),
  /**
   * What published the stream; the same publishers' rate just before with no subscriber (the
   * same-run baseline); each service's CPU ms per acknowledged event, live and alone.
   */
  streamLoad: z
    .object({
      publisher: z.string(),
      publishedAlonePerSec: z.number(),
      cpuMsPerEvent: z.record(z.string(), z.number()),
      cpuMsPerEventAlone: z.record(z.string(), z.number()),
    })
    .nullable()
    .default(null),
  latency: z.object({ rate: z.number(), seconds: z.number(), published: z.number().int(), rows: z.array(LatencyRow) }).nullable(),
});
export type ProtocolResults = z.infer<typeof ProtocolResultsSchema>;
export type ProtocolPublishRow = z.infer<typeof PublishRow>;
export type ProtocolStreamRow = z.infer<typeof StreamRow>;
export type ProtocolLatencyRow = z.infer<typeof LatencyRow>;

export const emptyProtocolResults = (): ProtocolResults => ({ publish: [], stream: [], streamLoad: null, latency: null });

const n0 = (v: number) => Math.round(v).toLocaleString("en-US");
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2));
const lat = (l: Latency) => `${ms(l.p50)} / ${ms(l.p90)} / ${ms(l.p99)} / ${ms(l.max)}`;
const yes = (met: boolean | null) => (met === null ? "" : met ? "met" : "NOT met");
const times = (r: number | null) => (r === null ? "–" : `${r.toFixed(2)} ×`);

/** The STOMP and MQTT tables, or nothing when the run had none of those scenarios. */
export function renderProtocols(p: ProtocolResults): string[] {
  const out: string[] = [];
  if (p.publish.length) {
    out.push(
      "",
      "One-connection publishers (STOMP SEND with receipt, MQTT 5 QoS 1; many in flight) against the HTTP closed loop at 8 connections just before; latency send → answer, ms:",
      "",
      "| protocol | in flight | publishes/s | p50 / p90 / p99 / max | HTTP 8 conn. /s | ratio | goal ≥ 1 × |",
      "|---|---|---|---|---|---|---|",
      ...p.publish.map(
        (x) =>
          `| ${x.protocol} | ${x.inFlight} | ${n0(x.throughput)} | ${lat(x.latency)} | ${n0(x.http8Throughput)} | ${times(x.ratio)} | ${yes(x.goalMet)} |`,
      ),
    );
  }
  if (p.stream.length) {
    out.push(
      "",
      `One subscriber per protocol receiving a published stream${p.streamLoad ? ` (${p.streamLoad.publisher})` : ""}; live: received while publishing went on, catch-up: read afterwards, alone (every acknowledged event exactly once, in ledger order):`,
      "",
      "| protocol | mode | stream published /s | events/s received | ÷ published | ÷ catch-up | goal | acknowledged | received | missing / dup. / out of order | correct |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
      ...p.stream.map(
        (x) =>
          `| ${x.protocol} | ${x.mode} | ${n0(x.publishedPerSec)} | ${n0(x.eventsPerSec)} | ${times(x.publishRatio)} | ${times(x.catchUpRatio)} | ≥ ${n0(x.goalPerSec)}: ${yes(x.goalMet)} | ${n0(x.acknowledged)} | ${n0(x.received)} | ${x.missing} / ${x.duplicates} / ${x.outOfOrder} | ${x.ok ? "yes" : "NO"} |`,
      ),
    );
    const load = p.streamLoad;
    if (load)
      out.push(
        "",
        `The same publishers with no subscriber, just before: ${n0(load.publishedAlonePerSec)} publishes/s. CPU ms per acknowledged event, with the live subscribers: ${cpuList(load.cpuMsPerEvent)}; with none: ${cpuList(load.cpuMsPerEventAlone)}.`,
      );
  }
  const l = p.latency;
  if (l) {
    out.push(
      "",
      `Publish sent → delivery at ${n0(l.rate)} publishes/s for ${l.seconds} s (${n0(l.published)} acknowledged; the same publishes to a callback, a STOMP and an MQTT subscriber), ms:`,
      "",
      "| delivered by | delivered | p50 / p90 / p99 / max | p99 ÷ callback p99 | goal ≤ 1 × |",
      "|---|---|---|---|---|",
      ...l.rows.map(
        (x) =>
          `| ${x.via} | ${n0(x.delivered)} | ${lat(x.latency)} | ${x.via === "callback" ? "" : times(x.p99Ratio)} | ${yes(x.goalMet)} |`,
      ),
    );
  }
  return out;
}
