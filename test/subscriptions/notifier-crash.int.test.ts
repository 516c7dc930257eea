import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { expectCountsSettle, failoverNotifierEnv, openTopic, publishMany, subscribe } from "./helpers.ts";

// Crash survived: SIGKILL of the (only) notifier while it is dispatching and delivering. The
// backlog and cursors live in Postgres and move only after a 2xx, recorded in batches of
// DELIVERY_RECORD_EVENTS, so the restarted notifier resumes where the last commit left off: the
// events delivered but not yet recorded at the kill (at most one batch per subscription) arrive
// twice, nothing is lost, and nothing delivered after the restart repeats.
const RECORD_EVENTS = 10;
describe("notifier SIGKILL mid-stream", () => {
  let sys: TestSystem;
  let rx: Receiver;

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: { ...failoverNotifierEnv(RECORD_EVENTS), RETRY_BASE_MS: "50", RETRY_MAX_MS: "200" },
    });
    rx = await Receiver.start();
    rx.answer = () => ({ status: 200, delayMs: 5 });
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("loses nothing and keeps publish order per subscription", async () => {
    await openTopic(sys.gatewayUrl, "crash/a");
    const exact = await subscribe(sys.gatewayUrl, { topic: "crash/a", url: rx.url("/exact") });
    const pattern = await subscribe(sys.gatewayUrl, { topic: "crash/#", url: rx.url("/pattern") });
    const publishing = publishMany(sys.gatewayUrl, "crash/a", 200, 4);

    await rx.until(() => rx.deliveredIds(exact).length >= 30, "30 deliveries before the kill");
    await sys.kill("notifier-1");
    // A POST the notifier wrote just before it died may still sit in the receiver's socket
    // buffer; let the receiver read it, so that it counts as sent before the kill (the dead
    // process cannot send anything new, and the restart comes after this count).
    await new Promise((r) => setTimeout(r, 500));
    const atKill = rx.requests.length;
    await sys.restart("notifier-1");
    const ids = await publishing;

    await rx.until(() => rx.deliveredIds(exact).length >= 200 && rx.deliveredIds(pattern).length >= 200, "every event to both", 60_000);
    expect(rx.deliveredIds(exact)).toEqual(ids);
    expect(rx.deliveredIds(pattern)).toEqual(ids);
    expect(atKill).toBeLessThan(400);
    // Duplicates come only from the kill: the unrecorded tail (at most one batch) per subscription,
    // each first sent before the kill; events first sent after the restart never repeat.
    expect(rx.requests.length - 400).toBeLessThanOrEqual(2 * RECORD_EVENTS);
    const before = new Set(
      rx
        .delivered()
        .slice(0, atKill)
        .map((d) => `${d.subscriptionId}/${d.event.eventId}`),
    );
    const seen = new Set<string>();
    for (const d of rx.delivered()) {
      const key = `${d.subscriptionId}/${d.event.eventId}`;
      if (seen.has(key)) expect(before.has(key), `${key} repeated although first sent after the kill`).toBe(true);
      seen.add(key);
    }

    await expectCountsSettle(sys.gatewayUrl, [exact, pattern], 200);
  });
});

// Crash survived: SIGKILL of one of two notifiers, never restarted. The survivor takes over the
// dead one's running jobs once their BullMQ locks expire, and both dispatch the same group in
// turns under the group's row lock without matching an event twice.
describe("two notifiers, one killed for good", () => {
  let sys: TestSystem;
  let rx: Receiver;

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 2,
      env: failoverNotifierEnv(RECORD_EVENTS),
    });
    rx = await Receiver.start();
    rx.answer = () => ({ status: 200, delayMs: 5 });
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("the survivor delivers everything, in order, to every subscription", async () => {
    await openTopic(sys.gatewayUrl, "pair/a");
    const subs: string[] = [];
    for (let i = 0; i < 4; i++) subs.push(await subscribe(sys.gatewayUrl, { topic: i % 2 ? "pair/+" : "pair/a", url: rx.url(`/s${i}`) }));
    const publishing = publishMany(sys.gatewayUrl, "pair/a", 100, 4);
    await rx.until(() => rx.requests.length >= 60, "60 deliveries before the kill");
    await sys.kill("notifier-1");
    const ids = await publishing;
    await rx.until(() => subs.every((s) => rx.deliveredIds(s).length >= 100), "every event to all four", 60_000);
    for (const s of subs) expect(rx.deliveredIds(s)).toEqual(ids);
    // Only the killed notifier's unrecorded tail may repeat: at most one batch per subscription.
    expect(rx.requests.length - 400).toBeLessThanOrEqual(subs.length * RECORD_EVENTS);
  });
});
