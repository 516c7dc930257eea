/**
 * What the STOMP and MQTT scenarios conclude from what the generators saw (pure, unit-tested):
 * whether a subscriber got every acknowledged event exactly once and in ledger order, its
 * events/s, publish → delivery latencies, and the goals of issue 22, item 7.
 */
import type { Delivery } from "./protocol-clients.ts";
import { type Latency, latencyOf, ratio } from "./stats.ts";

/** Issue 22, item 7: each subscriber receives at least this many events per second. */
export const STREAM_GOAL_PER_SEC = 5000;

export interface StreamCheck {
  /** Acknowledged publishes (SUCCESS answers) of the stream. */
  acknowledged: number;
  received: number;
  /** Deliveries of an eventId delivered before. */
  duplicates: number;
  /** Acknowledged events never delivered. */
  missing: number;
  /** Deliveries whose topic is not the one the event was acknowledged under. */
  misrouted: number;
  /** Distinct deliveries of events nobody saw acknowledged (sealed while the generator stopped). */
  unacknowledged: number;
  unacknowledgedBound: number;
  /** Deliveries of a lower block height than one before, or of a topic's lower-or-equal sequence number. */
  outOfOrder: number;
  ok: boolean;
}

/** `hash-seq-height` → [seq, height]. */
function position(eventId: string): [number, number] {
  const [, seq, height] = eventId.split("-");
  return [Number(seq), Number(height)];
}

/**
 * Every acknowledged event (eventId → topic) delivered exactly once under its topic, in ledger
 * order: block heights never go back, and within a topic sequence numbers only go up.
 * Events sealed but not acknowledged (at most `bound`) may be delivered too.
 */
export function checkStream(deliveries: readonly Delivery[], acked: ReadonlyMap<string, string>, bound: number): StreamCheck {
  const seen = new Set<string>();
  const lastSeq = new Map<string, number>();
  let lastHeight = 0;
  const c = { duplicates: 0, misrouted: 0, unacknowledged: 0, outOfOrder: 0 };
  for (const [topic, eventId] of deliveries) {
    if (seen.has(eventId)) {
      c.duplicates++;
      continue;
    }
    seen.add(eventId);
    const topicAcked = acked.get(eventId);
    if (topicAcked === undefined) c.unacknowledged++;
    else if (topicAcked !== topic) c.misrouted++;
    const [seq, height] = position(eventId);
    if (!(height >= lastHeight) || !(seq > (lastSeq.get(topic) ?? 0))) c.outOfOrder++;
    lastHeight = Math.max(lastHeight, height);
    lastSeq.set(topic, Math.max(seq, lastSeq.get(topic) ?? 0));
  }
  let missing = 0;
  for (const id of acked.keys()) if (!seen.has(id)) missing++;
  const ok = c.duplicates === 0 && missing === 0 && c.misrouted === 0 && c.outOfOrder === 0 && c.unacknowledged <= bound;
  return { acknowledged: acked.size, received: deliveries.length, missing, unacknowledgedBound: bound, ...c, ok };
}

/** Deliveries per second from the first arrival to the last. */
export function deliveryRate(deliveries: readonly Delivery[]): number {
  if (deliveries.length < 2) return 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const [, , at] of deliveries) {
    first = Math.min(first, at);
    last = Math.max(last, at);
  }
  return last > first ? (deliveries.length - 1) / ((last - first) / 1000) : 0;
}

/**
 * Deliveries per second that arrived inside [fromMs, toMs] (epoch ms): a live subscriber's rate
 * while publishing went on, not diluted by the drain after it nor by a slow start before.
 */
export function rateWithin(deliveries: readonly Delivery[], fromMs: number, toMs: number): number {
  if (!(toMs > fromMs)) return 0;
  let n = 0;
  for (const [, , at] of deliveries) if (at >= fromMs && at <= toMs) n++;
  return n / ((toMs - fromMs) / 1000);
}

/** Publish → arrival, ms, of the first delivery of each event whose send time is known (eventId → epoch ms). */
export function deliveryLatency(deliveries: readonly Delivery[], sentAt: ReadonlyMap<string, number>): Latency {
  const seen = new Set<string>();
  const out: number[] = [];
  for (const [, eventId, at] of deliveries) {
    const sent = sentAt.get(eventId);
    if (sent === undefined || seen.has(eventId)) continue;
    seen.add(eventId);
    out.push(at - sent);
  }
  return latencyOf(out);
}

/** (a) a one-connection publisher against HTTP at 8 connections: the ratio and whether it is at least 1. */
export function publishGoal(protocolPerSec: number, http8PerSec: number): { ratio: number | null; met: boolean } {
  const r = ratio(protocolPerSec, http8PerSec);
  return { ratio: r, met: r !== null && r >= 1 };
}

/** (c) a protocol's p99 against the callbacks' p99 of the same publishes: the ratio and whether it is at most 1. */
export function latencyGoal(protocolP99: number, callbackP99: number): { ratio: number | null; met: boolean } {
  const r = ratio(protocolP99, callbackP99);
  return { ratio: r, met: r !== null && r <= 1 };
}
