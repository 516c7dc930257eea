/**
 * The bench's open-loop load generator, run as its own process:
 *   node bench/fixed-rate.ts '<json settings>'
 * Sends form publishes at a fixed rate whatever the answers do (wrk2 is not packaged in Debian,
 * and h2load's --rps paces each connection only after its previous answer, sends one fixed body
 * and cannot read the answers). Latency counts from the moment a request was due, not from when
 * a connection was free to send it, so a stalled broker cannot hide its queue (no coordinated
 * omission). Requests go over raw keep-alive sockets with pre-built bytes; a due request waits
 * for a free connection only when `maxConnections` are all busy.
 * Prints one JSON line (FixedRateResult) on stdout; with `out`, writes
 * "topic<TAB>eventId<TAB>answeredAtEpochMs<TAB>dueAtEpochMs" for each SUCCESS answer (due: when it
 * was to be sent, which is when it was sent unless every connection was busy).
 */
import { writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { latencyOf, percentileOf } from "./stats.ts";

export interface FixedRateSettings {
  /** host:port of each gateway; requests alternate between them. */
  targets: string[];
  path: string;
  rate: number;
  seconds: number;
  topicPrefix: string;
  topics: number;
  contentBytes: number;
  maxConnections: number;
  out?: string;
}

const s = JSON.parse(process.argv[2] ?? "{}") as FixedRateSettings;
const epochNow = () => performance.timeOrigin + performance.now();

const content = "x".repeat(s.contentBytes);
const requests = s.targets.map((target) =>
  Array.from({ length: s.topics }, (_, i) => {
    const body = `topic=${encodeURIComponent(`${s.topicPrefix}${i}`)}&content=${content}`;
    return Buffer.from(
      `POST ${s.path} HTTP/1.1\r\nHost: ${target}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }),
);

interface Conn {
  socket: Socket;
  target: number;
  busy: boolean;
  dueAt: number;
  buf: Buffer;
}
const idle: Conn[][] = s.targets.map(() => []);
const open = s.targets.map(() => 0);
const waiting: Array<Array<{ dueAt: number; topic: number }>> = s.targets.map(() => []);
const latencies: number[] = [];
const acks: string[] = [];
let sent = 0;
let answered = 0;
let success = 0;
let failed = 0;
let errors = 0;
let failSample = "";
let lastAnswerAt = 0;
const total = Math.round(s.rate * s.seconds);

function finish(conn: Conn, status: number, body: string): void {
  const now = performance.now();
  latencies.push(now - conn.dueAt);
  answered++;
  lastAnswerAt = now;
  if (status === 200 && body.includes('"status":"SUCCESS"')) {
    success++;
    if (s.out) {
      const topic = /"topic":"([^"]*)"/.exec(body)?.[1] ?? "";
      const eventId = /"eventId":"([^"]*)"/.exec(body)?.[1] ?? "";
      acks.push(`${topic}\t${eventId}\t${(performance.timeOrigin + now).toFixed(3)}\t${(performance.timeOrigin + conn.dueAt).toFixed(3)}`);
    }
  } else {
    failed++;
    failSample ||= `${status} ${body.slice(0, 200)}`;
  }
  conn.busy = false;
  const next = waiting[conn.target]?.shift();
  if (next) send(conn, next.dueAt, next.topic);
  else idle[conn.target]?.push(conn);
}

function onData(conn: Conn, chunk: Buffer): void {
  conn.buf = conn.buf.length ? Buffer.concat([conn.buf, chunk]) : chunk;
  for (;;) {
    const end = conn.buf.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = conn.buf.toString("latin1", 0, end);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      conn.socket.destroy(new Error(`answer without content-length: ${head.slice(0, 200)}`));
      return;
    }
    const bodyEnd = end + 4 + Number(length[1]);
    if (conn.buf.length < bodyEnd) return;
    const body = conn.buf.toString("utf8", end + 4, bodyEnd);
    conn.buf = conn.buf.subarray(bodyEnd);
    finish(conn, Number(head.slice(9, 12)), body);
  }
}

function newConn(target: number): Conn {
  const [host, port] = (s.targets[target] as string).split(":");
  const conn: Conn = { socket: connect(Number(port), host), target, busy: false, dueAt: 0, buf: Buffer.alloc(0) };
  conn.socket.setNoDelay(true);
  open[target] = (open[target] ?? 0) + 1;
  conn.socket.on("data", (c: Buffer) => onData(conn, c));
  conn.socket.on("error", () => {});
  conn.socket.on("close", () => {
    open[target] = (open[target] ?? 1) - 1;
    const list = idle[target] ?? [];
    const i = list.indexOf(conn);
    if (i >= 0) list.splice(i, 1);
    if (conn.busy) {
      conn.busy = false;
      errors++;
      answered++;
    }
  });
  return conn;
}

function send(conn: Conn, dueAt: number, topic: number): void {
  conn.busy = true;
  conn.dueAt = dueAt;
  conn.socket.write(requests[conn.target]?.[topic] as Buffer);
}

const start = performance.now();
const interval = 1000 / s.rate;
const timer = setInterval(() => {
  const now = performance.now();
  while (sent < total && start + sent * interval <= now) {
    const target = sent % s.targets.length;
    const dueAt = start + sent * interval;
    const topic = sent % s.topics;
    sent++;
    const conn = idle[target]?.pop() ?? ((open[target] ?? 0) < s.maxConnections ? newConn(target) : undefined);
    if (conn) send(conn, dueAt, topic);
    else waiting[target]?.push({ dueAt, topic });
  }
  if (sent >= total) clearInterval(timer);
}, 1);

// Wait for the answers while they keep coming: a slow broker is measured, a stalled one (no
// answer for STALL_MS, longer than the gateway's 10 s publish timeout) is reported as unanswered.
const STALL_MS = 12_000;
while (answered < total && performance.now() - Math.max(lastAnswerAt, start + s.seconds * 1000) < STALL_MS) {
  await new Promise((r) => setTimeout(r, 20));
}
const unanswered = total - answered;
if (s.out) writeFileSync(s.out, acks.length ? `${acks.join("\n")}\n` : "");
const sorted = latencies.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    rate: s.rate,
    sent,
    success,
    failed,
    failSample,
    errors: errors + unanswered,
    seconds: s.seconds,
    // Over the time from the first send to the last answer: a broker that falls behind the rate shows it here.
    throughput: success / (Math.max(lastAnswerAt - start, s.seconds * 1000) / 1000),
    epochStart: epochNow() - (performance.now() - start),
    latency: latencyOf(sorted),
    sketch: { count: sorted.length, q: Array.from({ length: 200 }, (_, i) => percentileOf(sorted, (i + 1) / 2)) },
  })}\n`,
);
process.exit(0);
