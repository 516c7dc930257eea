/** The shape of a bench result (bench/results/*.json) and its rendering as Markdown tables. */
import type { LedgerCheck } from "./ledger-check.ts";
import { z } from "zod";
import { emptyProtocolResults, ProtocolResultsSchema, renderProtocols } from "./protocol-results.ts";
import { cpuList, formatRatio, type Latency, ratio } from "./stats.ts";

/** Latency figures in ms. */
const LatencySchema = z.object({ p50: z.number(), p90: z.number(), p99: z.number(), max: z.number() });

/** Who answered: the broker (1 gateway + 1 indexer, or 2 + 2) or a bare baseline server. */
const SystemSchema = z.enum(["broker", "broker-2x2", "node-http", "express"]);
export type System = z.infer<typeof SystemSchema>;

const LoadFigures = z.object({
  system: SystemSchema,
  /** Answers per second that were SUCCESS (publishes) or `code 0` (reads). */
  throughput: z.number(),
  latency: LatencySchema,
  success: z.number().int(),
  failed: z.number().int(),
  errors: z.number().int(),
});

const LedgerCheckSchema = z.object({
  scenario: z.string(),
  acknowledged: z.number().int(),
  duplicates: z.number().int(),
  missing: z.number().int(),
  inLedger: z.number().int(),
  unanswered: z.number().int(),
  unansweredBound: z.number().int(),
  ok: z.boolean(),
}) satisfies z.ZodType<LedgerCheck>;

/** A bench result as written to bench/results/<mode>-<time>.json. */
export const BenchResultSchema = z.object({
  version: z.literal(1),
  mode: z.enum(["quick", "full"]),
  startedAt: z.string(),
  finishedAt: z.string(),
  machine: z.object({
    nproc: z.number().int(),
    memTotalGiB: z.number(),
    loadAverage: z.array(z.number()),
    cpu: z.string(),
    node: z.string(),
    note: z.string(),
  }),
  settings: z.object({
    contentBytes: z.number().int(),
    topics: z.number().int(),
    closedLoopGenerator: z.string(),
    openLoopGenerator: z.string(),
  }),
  closedLoop: z.array(
    LoadFigures.extend({
      connections: z.number().int(),
      seconds: z.number(),
      /** Broker rows: CPU time (user + system) each service spent per SUCCESS publish during the run, in ms. */
      cpuMsPerPublish: z.record(z.string(), z.number()).optional(),
    }),
  ),
  openLoop: z.array(LoadFigures.extend({ rate: z.number(), seconds: z.number() })),
  /** The services' Kafka client (@platformatic/kafka) producing the same records directly. */
  kafka: z.object({ records: z.number().int(), recordsPerSec: z.number(), batch: z.number().int() }),
  callbacks: z.array(
    z.object({
      subscriptions: z.number().int(),
      /** Publishes per second; callbacks expected per second are rate × subscriptions. */
      rate: z.number(),
      seconds: z.number(),
      expected: z.number().int(),
      delivered: z.number().int(),
      callbacksPerSec: z.number(),
      /** Publish SUCCESS answer → callback arrival, ms. */
      latency: LatencySchema,
      /** CPU ms of each service per callback delivered (publishing included), while the scenario ran. */
      cpuMsPerCallback: z.record(z.string(), z.number()).optional(),
    }),
  ),
  slowReceiver: z
    .object({
      delayMs: z.number(),
      seconds: z.number(),
      delivered: z.number().int(),
      callbacksPerSec: z.number(),
      /** Callbacks of a (subscription, topic) that arrived after a later event of it. */
      orderViolations: z.number().int(),
    })
    .nullable(),
  /** The same slow receiver with a notifier whose DELIVERY_WINDOW is above 1 (`window`). */
  slowReceiverWindowed: z
    .object({
      window: z.number().int(),
      delayMs: z.number(),
      seconds: z.number(),
      delivered: z.number().int(),
      callbacksPerSec: z.number(),
      orderViolations: z.number().int(),
    })
    .nullable()
    .default(null),
  getEvent: LoadFigures.extend({ connections: z.number().int() }).nullable(),
  /** The same events as single publishes and as rest/publishBatch requests, over the same connections (`--only batch`). */
  batchPublish: z
    .object({
      connections: z.number().int(),
      batchSize: z.number().int(),
      seconds: z.number(),
      /** Events per second SUCCESS, and latency per request, ms. */
      single: z.object({ eventsPerSec: z.number(), latency: LatencySchema }),
      batched: z.object({ eventsPerSec: z.number(), requestsPerSec: z.number(), latency: LatencySchema }),
    })
    .nullable()
    .default(null),
  /** Peak resident memory (VmHWM) of each service, MiB, e.g. "1x1 gateway-1". */
  peakRssMiB: z.record(z.string(), z.number()),
  /** STOMP and MQTT: one-connection publishers, stream subscribers, publish → delivery latency (issue 22, item 7). */
  protocols: ProtocolResultsSchema.default(emptyProtocolResults),
  ledger: z.array(LedgerCheckSchema),
  /** Everything that makes the run incorrect: non-SUCCESS answers, ledger mismatches, lost callbacks. */
  problems: z.array(z.string()),
  /** What the load did to the answers without making them wrong: requests left unanswered within the 10 s timeout. */
  warnings: z.array(z.string()).default([]),
});
export type BenchResult = z.infer<typeof BenchResultSchema>;
export type CallbackFigures = BenchResult["callbacks"][number];
export type SlowReceiverFigures = NonNullable<BenchResult["slowReceiver"]>;

const n0 = (v: number) => Math.round(v).toLocaleString("en-US");
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : v.toFixed(2));
const lat = (l: Latency) => `${ms(l.p50)} / ${ms(l.p90)} / ${ms(l.p99)} / ${ms(l.max)}`;
const BROKERS: System[] = ["broker", "broker-2x2"];

/** The Markdown tables of a result: every broker figure next to its same-run baselines. */
export function renderTables(r: BenchResult): string {
  const out: string[] = [];
  const closed = (sys: System, c: number) => r.closedLoop.find((x) => x.system === sys && x.connections === c);
  const connections = [...new Set(r.closedLoop.map((x) => x.connections))].sort((a, b) => a - b);
  out.push(
    "Closed loop (each connection sends its next publish when the previous is answered); publishes/s and latency p50 / p90 / p99 / max in ms:",
    "",
    "| connections | system | publishes/s | latency ms | % of node:http | % of express | % of Kafka client |",
    "|---|---|---|---|---|---|---|",
  );
  for (const c of connections) {
    for (const sys of [...BROKERS, "node-http", "express"] as System[]) {
      const x = closed(sys, c);
      if (!x) continue;
      const isBroker = BROKERS.includes(sys);
      const vs = (b: System) => (isBroker ? formatRatio(ratio(x.throughput, closed(b, c)?.throughput)) : "");
      const kafka = isBroker ? formatRatio(ratio(x.throughput, r.kafka.recordsPerSec)) : "";
      out.push(`| ${c} | ${sys} | ${n0(x.throughput)} | ${lat(x.latency)} | ${vs("node-http")} | ${vs("express")} | ${kafka} |`);
    }
  }
  out.push(
    "",
    `Kafka client baseline: @platformatic/kafka produced ${n0(r.kafka.records)} of the same records (${r.kafka.batch} per request, one in flight, acks = all, idempotent) at ${n0(r.kafka.recordsPerSec)} records/s.`,
    "",
    "Open loop (publishes sent at a fixed rate whatever the answers do; latency from when each was due), ms:",
    "",
    "| rate /s | system | answered SUCCESS /s | p50 / p90 / p99 / max | p99 × node:http |",
    "|---|---|---|---|---|",
  );
  for (const o of r.openLoop) {
    const base = r.openLoop.find((x) => x.system === "node-http" && x.rate === o.rate);
    const times = BROKERS.includes(o.system) && base && base.latency.p99 > 0 ? `${(o.latency.p99 / base.latency.p99).toFixed(1)} ×` : "";
    out.push(`| ${n0(o.rate)} | ${o.system} | ${n0(o.throughput)} | ${lat(o.latency)} | ${times} |`);
  }
  if (r.callbacks.length) {
    out.push(
      "",
      "Callbacks (publish SUCCESS answer → callback arrival at a receiver that answers 200 at once), ms:",
      "",
      "| subscriptions | publishes/s | callbacks expected | delivered | callbacks/s | p50 / p90 / p99 / max | CPU ms per callback |",
      "|---|---|---|---|---|---|---|",
    );
    for (const c of r.callbacks) {
      out.push(
        `| ${c.subscriptions} | ${n0(c.rate)} | ${n0(c.expected)} | ${n0(c.delivered)} | ${n0(c.callbacksPerSec)} | ${lat(c.latency)} | ${cpuList(c.cpuMsPerCallback)} |`,
      );
    }
  }
  const s = r.slowReceiver;
  if (s) {
    out.push(
      "",
      `Slow receiver (${s.delayMs} ms per callback, one subscription): ${n0(s.callbacksPerSec)} callbacks/s over ${s.seconds} s, ${s.orderViolations} out of order.`,
    );
  }
  const w = r.slowReceiverWindowed;
  if (w) {
    out.push(
      "",
      `Slow receiver with DELIVERY_WINDOW=${w.window} (its own notifier): ${n0(w.callbacksPerSec)} callbacks/s over ${w.seconds} s, ${w.orderViolations} out of order.`,
    );
  }
  const g = r.getEvent;
  if (g) {
    const base = closed("node-http", g.connections);
    out.push(
      "",
      `getEvent reads (${g.connections} connections): ${n0(g.throughput)} /s, ms ${lat(g.latency)}; ${formatRatio(ratio(g.throughput, base?.throughput))} of node:http.`,
    );
  }
  const b = r.batchPublish;
  if (b) {
    out.push(
      "",
      `Batch publish (${b.connections} connections, ${b.seconds} s each): single publishes ${n0(b.single.eventsPerSec)} events/s (ms ${lat(b.single.latency)}); ` +
        `batches of ${b.batchSize} ${n0(b.batched.eventsPerSec)} events/s in ${n0(b.batched.requestsPerSec)} requests/s (ms per batch ${lat(b.batched.latency)}); ` +
        `${(b.batched.eventsPerSec / Math.max(1, b.single.eventsPerSec)).toFixed(1)} × the events/s of single publishes.`,
    );
  }
  out.push(...renderProtocols(r.protocols));
  const rss = Object.entries(r.peakRssMiB);
  if (rss.length) out.push("", `Peak RSS (VmHWM), MiB: ${rss.map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")}.`);
  const bad = r.ledger.filter((l) => !l.ok);
  out.push(
    "",
    `Correctness: ${r.problems.length === 0 ? "every answer SUCCESS, every callback delivered, and" : `${r.problems.length} problem(s): ${r.problems.join("; ")};`} ` +
      `ledger ${bad.length === 0 ? "holds exactly what was acknowledged" : "MISMATCH"} in ${r.ledger.length} scenario(s).`,
  );
  if (r.warnings.length) out.push("", `Warnings: ${r.warnings.join("; ")}.`);
  return out.join("\n");
}
