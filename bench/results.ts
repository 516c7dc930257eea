/** The shape of a bench result (bench/results/*.json) and its rendering as Markdown tables. */
import type { LedgerCheck } from "./ledger-check.ts";
import { formatRatio, type Latency, ratio } from "./stats.ts";

/** Who answered: the broker (1 gateway + 1 indexer, or 2 + 2) or a bare baseline server. */
export type System = "broker" | "broker-2x2" | "node-http" | "express";

export interface LoadFigures {
  system: System;
  /** Publishes per second answered SUCCESS. */
  throughput: number;
  latency: Latency;
  success: number;
  failed: number;
  errors: number;
}
export interface ClosedLoop extends LoadFigures {
  connections: number;
  seconds: number;
}
export interface OpenLoop extends LoadFigures {
  rate: number;
  seconds: number;
}
export interface CallbackFigures {
  subscriptions: number;
  /** Publishes per second; callbacks expected per second are rate × subscriptions. */
  rate: number;
  seconds: number;
  expected: number;
  delivered: number;
  callbacksPerSec: number;
  /** Publish SUCCESS answer → callback arrival, ms. */
  latency: Latency;
}
export interface SlowReceiverFigures {
  delayMs: number;
  seconds: number;
  delivered: number;
  callbacksPerSec: number;
  /** Callbacks of a (subscription, topic) that arrived after a later event of it. */
  orderViolations: number;
}

export interface BenchResult {
  version: 1;
  mode: "quick" | "full";
  startedAt: string;
  finishedAt: string;
  machine: { nproc: number; memTotalGiB: number; loadAverage: number[]; cpu: string; node: string; note: string };
  settings: { contentBytes: number; topics: number; closedLoopGenerator: string; openLoopGenerator: string };
  closedLoop: ClosedLoop[];
  openLoop: OpenLoop[];
  kafka: { records: number; recordsPerSec: number; batch: number };
  callbacks: CallbackFigures[];
  slowReceiver: SlowReceiverFigures | null;
  getEvent: (LoadFigures & { connections: number }) | null;
  peakRssMiB: Record<string, number>;
  ledger: LedgerCheck[];
  /** Everything that makes the run incorrect: non-SUCCESS answers, ledger mismatches, lost callbacks. */
  problems: string[];
}

const n0 = (v: number) => Math.round(v).toLocaleString("en-US");
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
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
    `Kafka client baseline: kafkajs produced ${n0(r.kafka.records)} of the same records (${r.kafka.batch} per request, one in flight, acks = all, idempotent) at ${n0(r.kafka.recordsPerSec)} records/s.`,
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
      "| subscriptions | publishes/s | callbacks expected | delivered | callbacks/s | p50 / p90 / p99 / max |",
      "|---|---|---|---|---|---|",
    );
    for (const c of r.callbacks) {
      out.push(
        `| ${c.subscriptions} | ${n0(c.rate)} | ${n0(c.expected)} | ${n0(c.delivered)} | ${n0(c.callbacksPerSec)} | ${lat(c.latency)} |`,
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
  const g = r.getEvent;
  if (g) {
    const base = closed("node-http", g.connections);
    out.push(
      "",
      `getEvent reads (${g.connections} connections): ${n0(g.throughput)} /s, ms ${lat(g.latency)}; ${formatRatio(ratio(g.throughput, base?.throughput))} of node:http.`,
    );
  }
  const rss = Object.entries(r.peakRssMiB);
  if (rss.length) out.push("", `Peak RSS (VmHWM), MiB: ${rss.map(([k, v]) => `${k} ${v.toFixed(0)}`).join(", ")}.`);
  const bad = r.ledger.filter((l) => !l.ok);
  out.push(
    "",
    `Correctness: ${r.problems.length === 0 ? "every answer SUCCESS, every callback delivered, and" : `${r.problems.length} problem(s): ${r.problems.join("; ")};`} ` +
      `ledger ${bad.length === 0 ? "holds exactly what was acknowledged" : "MISMATCH"} in ${r.ledger.length} scenario(s).`,
  );
  return out.join("\n");
}
