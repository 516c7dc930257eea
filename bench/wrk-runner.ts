/**
 * wrk (a C load generator from Debian's `wrk` package) as a child process of the bench, with
 * bench/wrk/load.lua inspecting every answer. The measuring work happens in wrk, not here.
 */
import { spawn, spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { type Latency, mergeQuantiles, type QuantileSketch } from "./stats.ts";

const LUA = join(import.meta.dirname, "wrk", "load.lua");

export interface LoadResult {
  /** Answers of any kind per second over the run. */
  requestsPerSec: number;
  /** SUCCESS answers per second: the figure the tables show. */
  throughput: number;
  seconds: number;
  requests: number;
  success: number;
  /** Answers that were not SUCCESS (or not `code 0` for reads). */
  failed: number;
  /** The first such answer, status and the start of its body. */
  failSample: string;
  /** Transport trouble: connect/read/write errors and requests with no answer within the timeout. */
  errors: number;
  latency: Latency;
  sketch: QuantileSketch;
}

const us = (v: unknown): number => (typeof v === "number" ? v / 1000 : 0);

/** Reads the `BENCH-RESULT {…}` line that load.lua's done() prints among wrk's own output. */
export function parseWrkOutput(stdout: string): LoadResult {
  const line = stdout.split("\n").find((l) => l.startsWith("BENCH-RESULT "));
  if (!line) throw new Error(`wrk printed no BENCH-RESULT line:\n${stdout.slice(0, 2000)}`);
  const r = JSON.parse(line.slice("BENCH-RESULT ".length)) as {
    requests: number;
    durationUs: number;
    success: number;
    failed: number;
    failSample: string;
    errors: Record<string, number>;
    latencyUs: Record<string, number>;
    sketchUs: number[];
  };
  const seconds = r.durationUs / 1e6;
  const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
  // wrk counts a non-2xx/3xx answer as a "status" error; load.lua counts those as failed already.
  const transport = errors - (r.errors.status ?? 0);
  return {
    requestsPerSec: seconds > 0 ? r.requests / seconds : 0,
    throughput: seconds > 0 ? r.success / seconds : 0,
    seconds,
    requests: r.requests,
    success: r.success,
    failed: r.failed,
    failSample: r.failSample,
    errors: transport,
    latency: { p50: us(r.latencyUs.p50), p90: us(r.latencyUs.p90), p99: us(r.latencyUs.p99), max: us(r.latencyUs.max) },
    sketch: { count: r.requests, q: r.sketchUs.map(us) },
  };
}

/** Makes sure `wrk` is on the PATH: installs the Debian package when running as root, else says what to install. */
export function ensureWrk(say: (m: string) => void): void {
  if (spawnSync("wrk", ["--version"], { stdio: "ignore" }).error === undefined) return;
  const root = process.getuid?.() === 0;
  const apt = spawnSync("apt-get", ["--version"], { stdio: "ignore" }).error === undefined;
  if (!root || !apt) {
    throw new Error("the bench needs wrk (an HTTP load generator): install the `wrk` package, e.g. `sudo apt-get install wrk`");
  }
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", "wrk"]]) {
    say(`wrk is missing; running \`apt-get ${args.join(" ")}\` (we are root)`);
    const r = spawnSync("apt-get", args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(" ")} failed (exit ${r.status}); install wrk by hand`);
  }
}

export interface WrkRun {
  url: string;
  connections: number;
  seconds: number;
  /** BENCH_* settings for load.lua (mode, path, topics, content size, output file). */
  env: Record<string, string>;
}

/** Runs wrk once and resolves with its parsed result. */
export function runWrk(run: WrkRun): Promise<LoadResult> {
  const threads = Math.max(1, Math.min(run.connections, availableParallelism()));
  const args = [`-t${threads}`, `-c${run.connections}`, `-d${run.seconds}s`, "--timeout", "10s", "-s", LUA, run.url];
  return new Promise((resolve, reject) => {
    const child = spawn("wrk", args, { env: { ...process.env, ...run.env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`wrk ${args.join(" ")} exited ${code}: ${err}${out}`));
      try {
        resolve(parseWrkOutput(out));
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** Several generators run side by side (one per gateway) taken as one run: counts add up, latency quantiles merge. */
export function mergeLoadResults(parts: readonly LoadResult[]): LoadResult {
  const sum = (f: (p: LoadResult) => number) => parts.reduce((a, p) => a + f(p), 0);
  const merged = mergeQuantiles(parts.map((p) => p.sketch));
  return {
    requestsPerSec: sum((p) => p.requestsPerSec),
    throughput: sum((p) => p.throughput),
    seconds: Math.max(0, ...parts.map((p) => p.seconds)),
    requests: sum((p) => p.requests),
    success: sum((p) => p.success),
    failed: sum((p) => p.failed),
    failSample: parts.find((p) => p.failSample)?.failSample ?? "",
    errors: sum((p) => p.errors),
    latency: { ...merged, max: Math.max(0, ...parts.map((p) => p.latency.max)) },
    sketch: { count: sum((p) => p.sketch.count), q: [] },
  };
}
