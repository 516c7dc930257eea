/** The measuring process's handle on protocol-subscriber.ts processes: start, resume, wait, read. */
import type { BenchSystem } from "./bench-system.ts";
import { startHelper } from "./helper-process.ts";
import type { Delivery, Protocol, ProtocolTarget } from "./protocol-clients.ts";
import type { ProtocolSubscribeSettings } from "./protocol-subscriber.ts";

export interface SubscriberHandle {
  protocol: Protocol;
  /** The generator process (its CPU is read from /proc). */
  pid: number;
  count(): Promise<number>;
  arrivals(): Promise<Delivery[]>;
  /** A catch-up subscriber starts receiving (see protocol-subscriber.ts). */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/** The first gateway's STOMP URL (L mount) and MQTT port. */
export function protocolTarget(sys: BenchSystem): ProtocolTarget {
  return { stompUrl: `${(sys.origins[0] as string).replace(/^http/, "ws")}/event-broker/stomp`, mqttPort: sys.mqttPorts[0] as number };
}

export async function startSubscriber(
  protocol: Protocol,
  target: ProtocolTarget,
  pattern: string,
  catchUp?: ProtocolSubscribeSettings["catchUp"],
): Promise<SubscriberHandle> {
  const settings: ProtocolSubscribeSettings = { protocol, target, pattern, ...(catchUp ? { catchUp } : {}) };
  const h = await startHelper("protocol-subscriber.ts", [JSON.stringify(settings)]);
  const url = `http://127.0.0.1:${h.port}`;
  return {
    protocol,
    pid: h.pid,
    count: async () => (await (await fetch(`${url}/count`)).json()) as number,
    arrivals: async () => (await (await fetch(`${url}/arrivals`)).json()) as Delivery[],
    resume: async () => {
      const r = await fetch(`${url}/resume`, { method: "POST" });
      if (!r.ok) throw new Error(`${protocol} subscriber could not resume: ${await r.text()}`);
    },
    stop: () => h.stop(),
  };
}

/**
 * Waits until every counter reached `expected`, or none moved for `quietSeconds` (what is
 * missing then is reported by the stream check, not waited for).
 */
export async function waitForCounts(counters: Array<() => Promise<number>>, expected: number, quietSeconds: number): Promise<void> {
  let last = -1;
  let movedAt = Date.now();
  for (;;) {
    const counts = await Promise.all(counters.map((c) => c()));
    if (counts.every((n) => n >= expected)) return;
    const sum = counts.reduce((a, b) => a + b, 0);
    if (sum !== last) {
      last = sum;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > quietSeconds * 1000) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
