/**
 * `npm run bench:delivery`: webhook fan-out through the whole pipeline (publish → ledger →
 * notifier → POST to a local receiver), printed as figures. Not a test: nothing here asserts.
 *
 * S subscriptions on one `#` pattern each receive every one of E events, so S × E callbacks are
 * expected. Reports callbacks/s and the time from a publish's SUCCESS answer to its callback.
 *   BENCH_SUBSCRIPTIONS (default 20), BENCH_EVENTS (default 500), BENCH_NOTIFIERS (default 1),
 *   BENCH_RECEIVER_DELAY_MS (default 0: the receiver answers at once); DATABASE_POOL_SIZE of
 *   the services (default 10).
 * Uses KAFKA_BROKERS / DATABASE_URL / REDIS_URL when set, otherwise the test stack.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { consoleProgress } from "@evb/devstack";
import { percentile, startBenchSystem } from "./bench-system.ts";

const subscriptions = Number(process.env.BENCH_SUBSCRIPTIONS ?? 20);
const events = Number(process.env.BENCH_EVENTS ?? 500);
const notifiers = Number(process.env.BENCH_NOTIFIERS ?? 1);
const receiverDelayMs = Number(process.env.BENCH_RECEIVER_DELAY_MS ?? 0);
const expected = subscriptions * events;

const ackedAt = new Map<string, number>();
const latencies: number[] = [];
let received = 0;
let firstAt = 0;
let lastAt = 0;
const receiver = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => {
    body += c;
  });
  req.on("end", () => {
    const now = performance.now();
    const eventId = (JSON.parse(body) as { event: { eventId: string } }).event.eventId;
    const acked = ackedAt.get(eventId);
    if (acked !== undefined) latencies.push(now - acked);
    received++;
    firstAt ||= now;
    lastAt = now;
    setTimeout(() => res.end("ok"), receiverDelayMs);
  });
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const sys = await startBenchSystem({
  gateways: 1,
  indexers: 1,
  notifiers,
  env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE ?? "10" },
});
try {
  const m = `${sys.origins[0]}/event-m`;
  const topics = Array.from({ length: 8 }, (_, i) => `fan/out/${i}`);
  for (const t of topics) await fetch(`${m}/rest/open?topic=${encodeURIComponent(t)}`);
  for (let s = 0; s < subscriptions; s++) {
    const r = await fetch(`${m}/rest/subscribe`, { method: "POST", body: new URLSearchParams({ topic: "fan/#", url: hook }) });
    if (!/^[0-9a-f-]{36}$/.test(await r.text())) throw new Error("subscribe failed");
  }
  const started = performance.now();
  const progress = setInterval(() => consoleProgress(`bench: ${received}/${expected} callbacks received`), 2000);
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (;;) {
        const i = next++;
        if (i >= events) return;
        const body = new URLSearchParams({ topic: topics[i % topics.length] as string, content: `event ${i}` });
        const r = (await (await fetch(`${m}/rest/publish`, { method: "POST", body })).json()) as { eventId?: string };
        if (r.eventId) ackedAt.set(r.eventId, performance.now());
      }
    }),
  );
  const deadline = Date.now() + 300_000;
  while (received < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  clearInterval(progress);
  latencies.sort((a, b) => a - b);
  const seconds = (lastAt - firstAt) / 1000;
  process.stdout.write(
    [
      "",
      `callbacks: ${received}/${expected} (${subscriptions} subscriptions × ${events} events, ${notifiers} notifier(s), receiver delay ${receiverDelayMs} ms)`,
      `throughput: ${(received / Math.max(seconds, 0.001)).toFixed(0)} callbacks/s (first to last callback ${seconds.toFixed(2)} s; ${((performance.now() - started) / 1000).toFixed(2)} s from the first publish)`,
      `publish answered → callback received, ms: p50 ${percentile(latencies, 50)}  p90 ${percentile(latencies, 90)}  p99 ${percentile(latencies, 99)}`,
      "",
    ].join("\n"),
  );
} finally {
  await sys.stop();
  receiver.close();
}
