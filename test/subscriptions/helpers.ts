import { expect } from "vitest";
import { call } from "../support/http.ts";

export const M = "/event-m";
export const E = "/event-e";
export const L = "/event-broker";

/**
 * Notifier settings for failure tests: loopback receivers allowed, a killed notifier's jobs
 * and leases taken over after 2 s, fast polling and sweeping, and the given record batch.
 */
export function failoverNotifierEnv(recordEvents: number): Record<string, string> {
  return {
    CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
    DELIVERY_LOCK_MS: "2000",
    DELIVERY_TIMEOUT_MS: "1500",
    NOTIFIER_POLL_MS: "200",
    NOTIFIER_SWEEP_MS: "500",
    DELIVERY_RECORD_EVENTS: String(recordEvents),
  };
}

/** Subscribes through variant M (or E); returns the raw id the broker answered. */
export async function subscribe(base: string, params: Record<string, string>, mount = M): Promise<string> {
  const r = await call(base, `${mount}/rest/subscribe`, params, "POST");
  expect(r.text, `subscribe ${JSON.stringify(params)}`).toMatch(/^[0-9a-f-]{36}$/);
  return r.text;
}

export async function openTopic(base: string, topic: string): Promise<void> {
  const r = await call(base, `${M}/rest/open`, { topic });
  expect(r.json).toBe(true);
}

/** Publishes one event through variant M; returns its eventId. */
export async function publish(base: string, topic: string, content: string, ext: Record<string, string> = {}): Promise<string> {
  const r = await call(base, `${M}/rest/publish`, { topic, content, ...ext }, "POST");
  const body = r.json as { status: string; eventId: string };
  expect(body.status, JSON.stringify(body)).toBe("SUCCESS");
  return body.eventId;
}

/** Publishes `n` events to a topic with at most `parallel` requests in flight; ids in ledger (seq) order. */
export async function publishMany(base: string, topic: string, n: number, parallel = 8): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const i = next++;
        ids.push(await publish(base, topic, `event ${i}`));
      }
    }),
  );
  return ids.sort((a, b) => seqOf(a) - seqOf(b));
}

/** The per-topic sequence number inside an eventId (hash8-seq-block). */
export function seqOf(eventId: string): number {
  return Number(eventId.split("-")[1]);
}

export async function admin(base: string, mount: string, op: string, params: Record<string, string> = {}): Promise<unknown> {
  return (await call(base, `${mount}/admin/${op}`, params)).json;
}

/**
 * Waits until E's listSubscription shows, for each subscription, `notified` events notified and
 * none pending (`notifyingEventCount` 0): the counters are exact once delivery settles.
 */
export async function expectCountsSettle(base: string, ids: readonly string[], notified: number): Promise<void> {
  const node = Object.keys((await admin(base, E, "listSubscription")) as object)[0] as string;
  await expect
    .poll(async () => {
      const list = (await admin(base, E, "listSubscription")) as Record<string, Record<string, Record<string, string>>>;
      const mine = list[node] ?? {};
      return ids.map((id) => [mine[id]?.notifiedEventCount, mine[id]?.notifyingEventCount]);
    })
    .toEqual(ids.map(() => [String(notified), "0"]));
}
