/** What `npm run bench` runs in each mode: the scenario list and how long each part lasts. */
export interface BenchPlan {
  mode: "quick" | "full";
  /** Seconds per broker closed-loop run and per baseline run. */
  closedSeconds: number;
  baselineSeconds: number;
  connections: number[];
  /** Seconds of unrecorded publishing after a broker starts (consumer group joins, JIT, pools). */
  warmUpSeconds: number;
  openRates: number[];
  openSeconds: number;
  kafkaRecords: number;
  /** Publish→callback scenarios: `subscriptions` each receive every publish sent at `rate` for `seconds`. */
  callbacks: Array<{ subscriptions: number; rate: number; seconds: number }>;
  /** How long to wait for the callbacks of a scenario after its last publish. */
  callbackDrainSeconds: number;
  slowReceiver: { delayMs: number; rate: number; seconds: number };
  getEvent: { connections: number; seconds: number };
  /** The publish figures again with 2 gateways and 2 indexers. */
  scaled: { connections: number[]; openRates: number[] };
  /** STOMP and MQTT (issue 22, item 7); see `ProtocolPlan`. */
  protocols: ProtocolPlan;
}

/** The STOMP and MQTT scenarios: one-connection publishers, stream subscribers, publish → delivery latency. */
export interface ProtocolPlan {
  /** Seconds each one-connection publisher (and the HTTP closed loop at 8 connections beside it) runs. */
  publishSeconds: number;
  /** SENDs / QoS 1 PUBLISHes a publisher keeps waiting for their RECEIPT / PUBACK. */
  inFlight: number;
  /**
   * Seconds of the published stream the subscribers receive, and what publishes it: this many
   * STOMP publisher processes (protocol-publisher.ts), one connection each with `streamInFlight`
   * SENDs waiting for their RECEIPT (at most STOMP_MAX_PENDING_PUBLISHES, 256 by default). A
   * publish waits ~0.2 s for its block on the shared 2-core machine, so by Little's law the rate
   * is about the SENDs in flight × 5 per second: 2 × 256 published ~2,900/s live, 4 × 256 ~5,400/s.
   */
  streamSeconds: number;
  streamPublishers: number;
  streamInFlight: number;
  /** Fixed publish rate and seconds of the latency scenario (publish → MESSAGE, PUBLISH and callback). */
  latencyRate: number;
  latencySeconds: number;
  /** How long subscribers may stay silent before the scenario stops waiting for the rest. */
  drainSeconds: number;
}

export const TOPICS = 16;
export const CONTENT_BYTES = 256;

export function benchPlan(mode: "quick" | "full"): BenchPlan {
  const all = [1, 8, 32, 256, 1024];
  if (mode === "quick") {
    return {
      mode,
      closedSeconds: 2,
      // Not less: 1,024 connections take a good part of a second just to connect on a busy machine.
      baselineSeconds: 2,
      connections: all,
      warmUpSeconds: 2,
      openRates: [1000, 5000],
      openSeconds: 2,
      kafkaRecords: 10_000,
      callbacks: [
        { subscriptions: 1, rate: 200, seconds: 2 },
        { subscriptions: 10, rate: 50, seconds: 2 },
        { subscriptions: 100, rate: 10, seconds: 2 },
      ],
      callbackDrainSeconds: 10,
      slowReceiver: { delayMs: 50, rate: 100, seconds: 2 },
      getEvent: { connections: 32, seconds: 2 },
      scaled: { connections: [256], openRates: [1000] },
      protocols: {
        publishSeconds: 2,
        inFlight: 128,
        streamSeconds: 3,
        streamPublishers: 4,
        streamInFlight: 256,
        latencyRate: 1000,
        latencySeconds: 3,
        drainSeconds: 10,
      },
    };
  }
  return {
    mode,
    closedSeconds: 20,
    baselineSeconds: 10,
    connections: all,
    warmUpSeconds: 10,
    openRates: [1000, 5000],
    openSeconds: 20,
    kafkaRecords: 200_000,
    callbacks: [
      { subscriptions: 1, rate: 300, seconds: 10 },
      { subscriptions: 1, rate: 1000, seconds: 10 },
      { subscriptions: 10, rate: 100, seconds: 10 },
      { subscriptions: 100, rate: 50, seconds: 10 },
    ],
    callbackDrainSeconds: 120,
    slowReceiver: { delayMs: 50, rate: 600, seconds: 20 },
    getEvent: { connections: 32, seconds: 10 },
    scaled: { connections: all, openRates: [1000, 5000] },
    protocols: {
      publishSeconds: 10,
      inFlight: 128,
      streamSeconds: 10,
      streamPublishers: 4,
      streamInFlight: 256,
      latencyRate: 1000,
      latencySeconds: 10,
      drainSeconds: 30,
    },
  };
}

/** The parts of a run that `--only` can pick. */
export const PARTS = [
  "kafka",
  "closed",
  "open",
  "get",
  "callbacks",
  "slow",
  "scaled",
  "protocol-publish",
  "protocol-stream",
  "protocol-latency",
  "batch",
] as const;
export type Part = (typeof PARTS)[number];

export interface Narrowing {
  /** Comma-separated parts (`--only closed,open`); all when absent. */
  only?: string;
  /** Comma-separated connection counts for the closed loops (`--connections 1,8`). */
  connections?: string;
  /** Comma-separated open-loop rates (`--rates 1000`). */
  rates?: string;
  /** Comma-separated callback scenarios, subscriptions x publishes/s (`--callbacks 1x1000,100x50`). */
  callbacks?: string;
}

/**
 * A plan cut down to some parts, for measuring one change quickly (a partial run is never the
 * published table). Unknown names are refused with the list of known ones. getEvent reads the
 * ids the closed loops acknowledged, so `get` brings the smallest closed loop along.
 */
export function narrowPlan(plan: BenchPlan, n: Narrowing): { plan: BenchPlan; parts: Set<Part>; partial: boolean } {
  const list = (s: string) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);
  const numbers = (s: string, what: string) =>
    list(s).map((x) => {
      const v = Number(x);
      if (!Number.isInteger(v) || v <= 0) throw new Error(`--${what}: "${x}" is not a positive whole number`);
      return v;
    });
  const parts = new Set<Part>(PARTS);
  if (n.only !== undefined) {
    parts.clear();
    for (const p of list(n.only)) {
      if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only: unknown part "${p}"; known parts: ${PARTS.join(", ")}`);
      parts.add(p as Part);
    }
  }
  const out: BenchPlan = { ...plan, scaled: { ...plan.scaled } };
  if (n.connections !== undefined) {
    out.connections = numbers(n.connections, "connections");
    out.scaled.connections = out.connections;
  }
  if (n.rates !== undefined) {
    out.openRates = numbers(n.rates, "rates");
    out.scaled.openRates = out.openRates;
  }
  if (n.callbacks !== undefined) {
    const seconds = plan.callbacks[0]?.seconds ?? 10;
    out.callbacks = list(n.callbacks).map((x) => {
      const m = /^(\d+)x(\d+)$/.exec(x);
      if (!m || Number(m[1]) <= 0 || Number(m[2]) <= 0)
        throw new Error(`--callbacks: "${x}" is not subscriptions x publishes/s, e.g. 1x1000`);
      return { subscriptions: Number(m[1]), rate: Number(m[2]), seconds };
    });
  }
  if (!parts.has("closed")) out.connections = parts.has("get") ? [Math.min(...out.connections)] : [];
  if (!parts.has("open")) out.openRates = [];
  if (!parts.has("callbacks")) out.callbacks = [];
  return {
    plan: out,
    parts,
    partial: n.only !== undefined || n.connections !== undefined || n.rates !== undefined || n.callbacks !== undefined,
  };
}
