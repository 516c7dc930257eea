/**
 * `npm run bench`: publish throughput and latency through the whole pipeline (HTTP → gateway →
 * Kafka → indexer → Postgres → receipt), printed as figures. Not a test: nothing here asserts.
 *
 * Uses KAFKA_BROKERS / DATABASE_URL / REDIS_URL when set, otherwise the same local stack as the
 * tests (its own Kafka on port 19092). Runs in an isolated schema/prefix and removes nothing else.
 *   BENCH_PUBLISHES (default 5000), BENCH_CONCURRENCY (default 64), BENCH_TOPICS (default 16),
 *   BENCH_CONTENT_BYTES (default 256), BENCH_GATEWAYS / BENCH_INDEXERS (default 1).
 */
import { consoleProgress } from "@evb/devstack";
import { percentile, startBenchSystem } from "./bench-system.ts";

const n = Number(process.env.BENCH_PUBLISHES ?? 5000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64);
const topicCount = Number(process.env.BENCH_TOPICS ?? 16);
const contentBytes = Number(process.env.BENCH_CONTENT_BYTES ?? 256);
const nGateways = Number(process.env.BENCH_GATEWAYS ?? 1);
const nIndexers = Number(process.env.BENCH_INDEXERS ?? 1);

const sys = await startBenchSystem({ gateways: nGateways, indexers: nIndexers });
const gateways = sys.gateways;
try {
  const topics = Array.from({ length: topicCount }, (_, i) => `bench/topic-${i}`);
  for (const t of topics) await fetch(`${gateways[0]}/rest/open?topic=${encodeURIComponent(t)}`);
  const content = "x".repeat(contentBytes);

  const latencies: number[] = [];
  const statuses = new Map<string, number>();
  let next = 0;
  let done = 0;
  const started = performance.now();
  const progress = setInterval(() => consoleProgress(`bench: ${done}/${n} publishes answered`), 2000);
  async function worker(w: number): Promise<void> {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      const body = new URLSearchParams({ topic: topics[i % topics.length] as string, content });
      const t0 = performance.now();
      const res = await fetch(`${gateways[(i + w) % gateways.length]}/rest/publish`, { method: "POST", body });
      const json = (await res.json()) as { status?: string; code?: number };
      latencies.push(performance.now() - t0);
      const key = json.status ?? `code ${json.code}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      done++;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  clearInterval(progress);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => percentile(latencies, p);
  process.stdout.write(
    [
      "",
      `publishes: ${n} (${contentBytes} B content, ${topicCount} topics, concurrency ${concurrency}, ${nGateways} gateway(s), ${nIndexers} indexer(s))`,
      `throughput: ${(n / seconds).toFixed(0)} publishes/s acknowledged (${seconds.toFixed(2)} s)`,
      `latency ms: p50 ${pct(50)}  p90 ${pct(90)}  p99 ${pct(99)}  max ${pct(100)}`,
      `answers: ${[...statuses].map(([k, v]) => `${k}=${v}`).join(" ")}`,
      "",
    ].join("\n"),
  );
} finally {
  await sys.stop();
}
