import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { admin, E, M, openTopic, publishMany, subscribe } from "./helpers.ts";

// Crash survived: none (DELIVERY_WINDOW above 1 on the real stack: order, retries and counters
// with several callbacks of one subscription in flight; the crash tests run at the default).

const seqOf = (eventId: string) => Number(eventId.split("-")[1]);
const eventIdOf = (body: string) => (JSON.parse(body) as { event: { eventId: string } }).event.eventId;

/** First occurrence of each event among `bodies`, in order. */
function firsts(bodies: string[]): string[] {
  const seen = new Set<string>();
  return bodies.map(eventIdOf).filter((id) => !seen.has(id) && seen.add(id) !== undefined);
}

describe("callback delivery with an in-flight window (DELIVERY_WINDOW=8)", () => {
  let sys: TestSystem;
  const receivers: Receiver[] = [];
  /** A receiver taking `delayMs` per callback (so answers come back in arrival order) that counts how many were in flight at once. */
  const receiver = async (delayMs: number, fail: (eventId: string, nth: number) => boolean = () => false) => {
    const rx = await Receiver.start();
    receivers.push(rx);
    const tries = new Map<string, number>();
    let arrived = 0;
    const stats = { maxInFlight: 0 };
    rx.answer = ({ n, body }): Answer => {
      arrived++;
      stats.maxInFlight = Math.max(stats.maxInFlight, arrived - n);
      const id = eventIdOf(body);
      const nth = (tries.get(id) ?? 0) + 1;
      tries.set(id, nth);
      return { status: fail(id, nth) ? 503 : 200, delayMs };
    };
    return { rx, stats };
  };
  const counts = async (id: string) => {
    const node = Object.keys((await admin(sys.gatewayUrl, E, "listSubscription")) as object)[0] as string;
    const list = (await admin(sys.gatewayUrl, M, "listSubscription", { nodeIp: node })) as {
      data: Record<string, Record<string, unknown>>;
    };
    return list.data[node]?.[id];
  };

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        DELIVERY_WINDOW: "8",
        RETRY_BASE_MS: "40",
        RETRY_MAX_MS: "200",
        DELIVERY_TIMEOUT_MS: "1500",
        NOTIFIER_POLL_MS: "200",
        NOTIFIER_SWEEP_MS: "1000",
      },
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await sys?.stop();
  });

  it("sends several callbacks at once to a slow receiver, in order, each once, counters exact", async () => {
    const { rx, stats } = await receiver(30);
    await openTopic(sys.gatewayUrl, "window");
    const id = await subscribe(sys.gatewayUrl, { topic: "window", url: rx.url() });
    const ids = await publishMany(sys.gatewayUrl, "window", 60, 8);
    await rx.until(() => rx.deliveredIds(id).length >= 60, "60 deliveries");
    expect(rx.deliveredIds(id)).toEqual(ids);
    expect(rx.requests).toHaveLength(60);
    // More than one callback of the subscription was in flight at a time.
    expect(stats.maxInFlight).toBeGreaterThan(1);
    await expect.poll(() => counts(id)).toMatchObject({ notifiedEventCount: "60", notifyingEventCount: "0" });
  });

  it("a failed event closes the window: what was sent after it comes again after its retry, in order; nothing is lost", async () => {
    // The 10th event of the topic fails once; the receiver takes 30 ms per callback.
    const { rx } = await receiver(30, (eventId, nth) => seqOf(eventId) === 10 && nth === 1);
    await openTopic(sys.gatewayUrl, "window-fail");
    const id = await subscribe(sys.gatewayUrl, { topic: "window-fail", url: rx.url() });
    const ids = await publishMany(sys.gatewayUrl, "window-fail", 40, 8);
    await rx.until(() => rx.deliveredIds(id).length >= 40, "40 deliveries");
    const bodies = rx.requests.map((r) => r.body);
    // First arrivals in event order.
    expect(firsts(bodies)).toEqual(ids);
    // After the failed event's successful retry, every later event arrives (again), in order.
    const tenth = ids[9] as string;
    const retried = rx.requests.findIndex((r) => r.status === 200 && eventIdOf(r.body) === tenth);
    expect(retried).toBeGreaterThan(0);
    expect(firsts(bodies.slice(retried))).toEqual(ids.slice(9));
    expect(rx.requests.filter((r) => r.status !== 200).map((r) => eventIdOf(r.body))).toEqual([tenth]);
    // Counted once each, whatever was sent twice.
    await expect.poll(() => counts(id)).toMatchObject({ notifiedEventCount: "40", notifyingEventCount: "0" });
  });
});
