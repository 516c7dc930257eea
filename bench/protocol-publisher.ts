/**
 * The bench's one-connection STOMP / MQTT publisher, run as its own process:
 *   node bench/protocol-publisher.ts '<json ProtocolPublishSettings>'
 * Keeps `inFlight` publishes waiting for their answer (STOMP SEND with a receipt → RECEIPT, MQTT
 * QoS 1 PUBLISH → PUBACK) on ONE connection for `seconds`, then waits for the last answers. Each
 * content starts with a key of its own (`k<n>|`), so the ledger check can find every acknowledged
 * MQTT publish, whose PUBACK names no eventId. Prints one JSON line (ProtocolPublishResult); with
 * `out`, writes "topic<TAB>eventId<TAB>key" for each sealed answer (eventId "" for MQTT).
 */
import { writeFileSync } from "node:fs";
import { epochNow, mqttPublisher, type Protocol, type ProtocolPublisher, type ProtocolTarget, stompPublisher } from "./protocol-clients.ts";
import { type Latency, latencyOf } from "./stats.ts";

export interface ProtocolPublishSettings {
  protocol: Protocol;
  target: ProtocolTarget;
  seconds: number;
  inFlight: number;
  topicPrefix: string;
  topics: number;
  contentBytes: number;
  out?: string;
}

export interface ProtocolPublishResult {
  protocol: Protocol;
  sent: number;
  success: number;
  failed: number;
  failSample: string;
  /** Publishes left without an answer when the generator gave up waiting. */
  errors: number;
  /** Sealed answers per second, from the first send to the last answer. */
  throughput: number;
  /** Send → answer, ms. */
  latency: Latency;
  /** The first send and the last answer, epoch ms: the window in which this publisher loaded the broker. */
  startedAt: number;
  endedAt: number;
  /** CPU time this generator used while publishing, ms (what the load cost the machine besides the broker). */
  cpuMs: number;
}

/** The unique content of publish `n`: its key, then padding to `bytes`. */
export function keyedContent(n: number, bytes: number): string {
  const key = `k${n}|`;
  return key + "x".repeat(Math.max(0, bytes - key.length));
}

const STALL_MS = 15_000;

async function run(s: ProtocolPublishSettings, publisher: ProtocolPublisher): Promise<ProtocolPublishResult> {
  const latencies: number[] = [];
  const acks: string[] = [];
  const r = { sent: 0, success: 0, failed: 0, failSample: "" };
  const start = performance.now();
  const startedAt = epochNow();
  const cpuAtStart = process.cpuUsage();
  const deadline = start + s.seconds * 1000;
  let lastAnswerAt = start;
  const one = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const n = r.sent++;
      const topic = `${s.topicPrefix}${n % s.topics}`;
      const sentAt = performance.now();
      const answer = await publisher.publish(topic, keyedContent(n, s.contentBytes));
      lastAnswerAt = performance.now();
      latencies.push(lastAnswerAt - sentAt);
      if (answer.ok) {
        r.success++;
        acks.push(`${topic}\t${answer.eventId}\tk${n}`);
      } else {
        r.failed++;
        r.failSample ||= answer.error;
      }
    }
  };
  const lanes = Promise.all(Array.from({ length: s.inFlight }, one));
  const stalled = new Promise<void>((resolve) => {
    const t = setInterval(() => {
      if (performance.now() > deadline && performance.now() - lastAnswerAt > STALL_MS) resolve();
    }, 100);
    void lanes.finally(() => {
      clearInterval(t);
      resolve();
    });
  });
  await stalled;
  if (s.out) writeFileSync(s.out, acks.length ? `${acks.join("\n")}\n` : "");
  return {
    protocol: s.protocol,
    ...r,
    errors: r.sent - r.success - r.failed,
    throughput: r.success / (Math.max(lastAnswerAt - start, 1) / 1000),
    latency: latencyOf(latencies),
    startedAt,
    endedAt: startedAt + (lastAnswerAt - start),
    cpuMs: ((used) => (used.user + used.system) / 1000)(process.cpuUsage(cpuAtStart)),
  };
}

if (import.meta.main) {
  const s = JSON.parse(process.argv[2] ?? "{}") as ProtocolPublishSettings;
  const publisher = s.protocol === "stomp" ? await stompPublisher(s.target.stompUrl) : await mqttPublisher(s.target.mqttPort);
  const result = await run(s, publisher);
  await Promise.race([publisher.close(), new Promise((r) => setTimeout(r, 2000))]);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
