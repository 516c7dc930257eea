import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";
import { TcpRelay } from "../support/tcp-relay.ts";
import { admin, expectCountsSettle, failoverNotifierEnv, M, openTopic, publishMany, subscribe } from "./helpers.ts";

// Crash survived: the notifier's Postgres hangs (connections open, nothing answered) and then
// refuses connections, in the middle of dispatching and delivering, and comes back. Queries fail
// after DATABASE_QUERY_TIMEOUT_MS instead of hanging; a storage failure is not a callback
// failure, so no subscription spends its retry budget or is dead-lettered for it; once Postgres
// answers, the same notifier process (no restart) delivers every event, in publish order.
describe("the notifier loses Postgres mid-stream", () => {
  let sys: TestSystem;
  let rx: Receiver;
  let relay: TcpRelay;

  beforeAll(async () => {
    relay = TcpRelay.for(inject("databaseUrl"), 5432);
    await relay.start();
    sys = await TestSystem.start({
      notifiers: 1,
      // A small retry budget: were storage failures counted as failed callbacks, it would be spent.
      env: { ...failoverNotifierEnv(10), RETRY_BASE_MS: "50", RETRY_MAX_MS: "200" },
      notifierEnv: { DATABASE_URL: relay.via(inject("databaseUrl")), DATABASE_QUERY_TIMEOUT_MS: "1000" },
    });
    rx = await Receiver.start();
    rx.answer = () => ({ status: 200, delayMs: 5 });
  });
  afterAll(async () => {
    relay?.up();
    await rx?.close();
    await sys?.stop();
    relay?.close();
  });

  it("delivers everything in order afterwards, dead-letters nothing, and counts exactly", async () => {
    await openTopic(sys.gatewayUrl, "pgout/a");
    const exact = await subscribe(sys.gatewayUrl, { topic: "pgout/a", url: rx.url("/exact") });
    const pattern = await subscribe(sys.gatewayUrl, { topic: "pgout/+", url: rx.url("/pattern") });
    const publishing = publishMany(sys.gatewayUrl, "pgout/a", 150, 4);

    await rx.until(() => rx.deliveredIds(exact).length >= 20, "20 deliveries before the outage");
    await relay.outage(["stall", "down"], 3000);
    const duringOutage = rx.deliveredIds(exact).length;
    const ids = await publishing;
    // The outage really held delivery back: publishing (through the gateway's own connection) went on.
    expect(duringOutage).toBeLessThan(150);

    await rx.until(() => rx.deliveredIds(exact).length >= 150 && rx.deliveredIds(pattern).length >= 150, "every event to both", 60_000);
    expect(rx.deliveredIds(exact)).toEqual(ids);
    expect(rx.deliveredIds(pattern)).toEqual(ids);

    type Dead = { data: { subscriptionId: string }[] };
    expect(((await admin(sys.gatewayUrl, M, "deadLetters")) as Dead).data).toEqual([]);
    await expectCountsSettle(sys.gatewayUrl, [exact, pattern], 150);
  });
});
