import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { throughputChart } from "./chart.ts";
import { type BenchResult, BenchResultSchema, renderTables } from "./results.ts";

const lat = (p50: number) => ({ p50, p90: p50 * 2, p99: p50 * 4, max: p50 * 8 });
const load = (system: BenchResult["closedLoop"][number]["system"], connections: number, throughput: number) => ({
  system,
  connections,
  seconds: 2,
  throughput,
  latency: lat(1000 / throughput),
  success: throughput * 2,
  failed: 0,
  errors: 0,
});

function sample(): BenchResult {
  return {
    version: 1,
    mode: "quick",
    startedAt: "2026-11-24T11:00:00.000Z",
    finishedAt: "2026-11-24T11:02:00.000Z",
    machine: { nproc: 2, memTotalGiB: 23, loadAverage: [1, 1, 1], cpu: "x86", node: "v24", note: "<test>" },
    settings: { contentBytes: 256, topics: 16, closedLoopGenerator: "wrk", openLoopGenerator: "fixed-rate" },
    closedLoop: [load("broker", 256, 5_000), load("node-http", 256, 50_000), load("express", 256, 20_000), load("broker-2x2", 256, 6_000)],
    openLoop: [
      { system: "broker", rate: 1000, seconds: 2, throughput: 1000, latency: lat(20), success: 2000, failed: 0, errors: 0 },
      { system: "node-http", rate: 1000, seconds: 2, throughput: 1000, latency: lat(1), success: 2000, failed: 0, errors: 0 },
    ],
    kafka: { records: 20_000, recordsPerSec: 100_000, batch: 500 },
    callbacks: [{ subscriptions: 10, rate: 50, seconds: 2, expected: 1000, delivered: 1000, callbacksPerSec: 480, latency: lat(30) }],
    slowReceiver: { delayMs: 50, seconds: 3, delivered: 60, callbacksPerSec: 19.5, orderViolations: 0 },
    slowReceiverWindowed: { window: 32, delayMs: 50, seconds: 3, delivered: 1500, callbacksPerSec: 512.4, orderViolations: 0 },
    getEvent: { system: "broker", connections: 256, throughput: 10_000, latency: lat(3), success: 20_000, failed: 0, errors: 0 },
    batchPublish: {
      connections: 8,
      batchSize: 100,
      seconds: 2,
      single: { eventsPerSec: 1000, latency: lat(8) },
      batched: { eventsPerSec: 12_000, requestsPerSec: 120, latency: lat(60) },
    },
    peakRssMiB: { "1x1 gateway-1": 150.4 },
    protocols: {
      publish: [
        {
          protocol: "stomp",
          inFlight: 128,
          seconds: 2,
          throughput: 1200,
          latency: lat(100),
          success: 2400,
          failed: 0,
          errors: 0,
          http8Throughput: 800,
          ratio: 1.5,
          goalMet: true,
        },
      ],
      stream: [
        {
          protocol: "mqtt",
          mode: "catch-up",
          publishedPerSec: 4000,
          eventsPerSec: 6500,
          publishRatio: null,
          catchUpRatio: null,
          goalPerSec: 5000,
          goalMet: true,
          acknowledged: 12000,
          received: 12000,
          duplicates: 0,
          missing: 0,
          misrouted: 0,
          unacknowledged: 0,
          outOfOrder: 0,
          ok: true,
        },
      ],
      streamLoad: {
        publisher: "2 STOMP publishers × 256 SENDs in flight",
        publishedAlonePerSec: 3000,
        cpuMsPerEvent: { "gateway-1": 0.25 },
        cpuMsPerEventAlone: { "gateway-1": 0.15 },
      },
      latency: {
        rate: 1000,
        seconds: 3,
        published: 3000,
        rows: [
          { via: "callback", delivered: 3000, latency: lat(20), p99Ratio: null, goalMet: null },
          { via: "stomp", delivered: 3000, latency: lat(30), p99Ratio: 1.5, goalMet: false },
        ],
      },
    },
    ledger: [
      {
        scenario: "broker closed loop 256",
        acknowledged: 10,
        duplicates: 0,
        missing: 0,
        inLedger: 10,
        unanswered: 0,
        unansweredBound: 256,
        ok: true,
      },
    ],
    problems: [],
    warnings: [],
  };
}

describe("BenchResultSchema", () => {
  it("accepts what the bench writes and rejects a result missing its baselines", () => {
    expect(BenchResultSchema.parse(JSON.parse(JSON.stringify(sample())))).toEqual(sample());
    const { kafka: _kafka, ...noKafka } = sample();
    expect(BenchResultSchema.safeParse(noKafka).success).toBe(false);
  });

  it("holds for every result committed under bench/results", () => {
    const dir = join(import.meta.dirname, "results");
    for (const f of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      const parsed = BenchResultSchema.safeParse(JSON.parse(readFileSync(join(dir, f), "utf8")));
      expect(parsed.error?.message, f).toBeUndefined();
    }
  });
});

describe("renderTables", () => {
  it("prints each broker figure with its ratio to the same-run baselines", () => {
    const t = renderTables(sample());
    expect(t).toContain("| 256 | broker | 5,000 | 0.20 / 0.40 / 0.80 / 1.6 | 10.0 % | 25.0 % | 5.00 % |");
    expect(t).toContain("| 256 | broker-2x2 | 6,000 |");
    expect(t).toContain("| 1,000 | broker | 1,000 | 20.0 / 40.0 / 80.0 / 160 | 20.0 × |");
    expect(t).toContain("getEvent reads (256 connections): 10,000 /s");
    expect(t).toContain("20.0 % of node:http");
    expect(t).toContain("Correctness: every answer SUCCESS");
    expect(t).toContain("Slow receiver with DELIVERY_WINDOW=32 (its own notifier): 512 callbacks/s over 3 s, 0 out of order.");
    expect(t).toContain("single publishes 1,000 events/s");
    expect(t).toContain("batches of 100 12,000 events/s in 120 requests/s");
    expect(t).toContain("12.0 × the events/s of single publishes.");
  });

  it("prints the STOMP and MQTT figures with their same-run ratios and goals", () => {
    const t = renderTables(sample());
    expect(t).toContain("| stomp | 128 | 1,200 | 100 / 200 / 400 / 800 | 800 | 1.50 × | met |");
    expect(t).toContain("| mqtt | catch-up | 4,000 | 6,500 | – | – | ≥ 5,000: met | 12,000 | 12,000 | 0 / 0 / 0 | yes |");
    expect(t).toContain(
      "no subscriber, just before: 3,000 publishes/s. CPU ms per acknowledged event, with the live subscribers: gateway-1 0.250; with none: gateway-1 0.150.",
    );
    expect(t).toContain("| callback | 3,000 | 20.0 / 40.0 / 80.0 / 160 |  |  |");
    expect(t).toContain("| stomp | 3,000 | 30.0 / 60.0 / 120 / 240 | 1.50 × | NOT met |");
  });

  it("reads results written before the STOMP and MQTT scenarios as having none", () => {
    const { protocols: _p, ...old } = sample();
    expect(BenchResultSchema.parse(old).protocols).toEqual({ publish: [], stream: [], streamLoad: null, latency: null });
    expect(renderTables({ ...sample(), protocols: { publish: [], stream: [], streamLoad: null, latency: null } })).not.toContain(
      "One-connection",
    );
  });

  it("says what went wrong when the run was not correct", () => {
    const r = sample();
    r.problems.push("broker closed loop 8: 3 non-SUCCESS answer(s)");
    r.ledger[0] = { ...(r.ledger[0] as BenchResult["ledger"][number]), missing: 1, ok: false };
    const t = renderTables(r);
    expect(t).toContain("1 problem(s): broker closed loop 8: 3 non-SUCCESS answer(s)");
    expect(t).toContain("ledger MISMATCH");
  });

  it("lists requests left unanswered as warnings, apart from the correctness verdict", () => {
    const r = sample();
    r.warnings.push("broker closed loop 1024: 56 request(s) without an answer within 10 s or cut off");
    const t = renderTables(r);
    expect(t).toContain("Correctness: every answer SUCCESS");
    expect(t).toContain("Warnings: broker closed loop 1024: 56 request(s) without an answer within 10 s or cut off.");
  });
});

describe("throughputChart", () => {
  it("draws one bar per system and load on a log scale", () => {
    const svg = throughputChart(sample());
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("<title>Publishes/s, closed loop (quick mode, 2026-11-24, 2 cores)</title>");
    expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
    expect(svg.match(/<rect [^>]*><title>/g)).toHaveLength(4);
    expect(svg).toContain("<title>broker, 256 connections: 5000/s</title>");
    // 10^0 … 10^5 grid lines for a top value of 50 000.
    expect(svg).toContain(">100,000</text>");
  });
});
