import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrokerClientE, BrokerClientL } from "evb-client";
import { runEvb } from "../cli/run-evb.ts";
import { call } from "../support/http.ts";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { admin, E, L, M, openTopic, publish, subscribe } from "./helpers.ts";

interface Page<T> {
  total: number;
  pageData: T[];
}
type Listed = { eventId: string; topic: string; content: string; blockNumber: number; eventTime: number };
type Delivery = { subscriptionId: string; state: string; resendsWaiting: number; attempts: { delivered: boolean }[] };

const data = <T>(reply: unknown) => (reply as { data: T }).data;

// Crash survived: none. Issue 23: the operator sees events, each event's deliveries, resends one
// and replays a subscription from a position, over real sockets through the real pipeline.
describe("events you can see", () => {
  let sys: TestSystem;
  let rx: Receiver;
  let sub: string;
  const ids: string[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({ notifiers: 1, env: { ...QUICK_CALLBACKS_ENV } });
    rx = await Receiver.start();
    await openTopic(sys.gatewayUrl, "shop/eu/paid");
    await openTopic(sys.gatewayUrl, "shop/us/paid");
    await openTopic(sys.gatewayUrl, "audit");
    sub = await subscribe(sys.gatewayUrl, { topic: "shop/+/paid", url: rx.url() });
    ids.push(await publish(sys.gatewayUrl, "shop/eu/paid", "one"));
    ids.push(await publish(sys.gatewayUrl, "shop/us/paid", "two"));
    ids.push(await publish(sys.gatewayUrl, "audit", "three"));
    ids.push(await publish(sys.gatewayUrl, "shop/eu/paid", "four"));
    await rx.until(() => rx.deliveredIds(sub).length >= 3, "three deliveries");
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("lists events by pattern, topic, eventId and time range, newest first with their content, in every variant's shape", async () => {
    const byPattern = data<Page<Listed>>(await admin(sys.gatewayUrl, L, "events", { topic: "shop/+/paid" }));
    expect(byPattern.total).toBe(3);
    expect(byPattern.pageData.map((e) => e.eventId)).toEqual([ids[3], ids[1], ids[0]]);
    expect(Buffer.from(byPattern.pageData[0]?.content ?? "", "base64").toString()).toBe("four");
    const first = byPattern.pageData[2] as Listed;
    const byTime = data<Page<Listed>>(
      await admin(sys.gatewayUrl, M, "events", { from: String(first.eventTime), to: String(Date.now() + 1000) }),
    );
    expect(byTime.pageData.map((e) => e.eventId)).toEqual([...ids].reverse());
    // E answers bare, and its Event has no extensions.
    const one = (await admin(sys.gatewayUrl, E, "events", { eventId: ids[2] as string })) as Page<Listed>;
    expect(one.pageData).toEqual([expect.objectContaining({ eventId: ids[2], topic: "audit" })]);
    expect(one.pageData[0]).not.toHaveProperty("extensions");
    const paged = data<Page<Listed>>(await admin(sys.gatewayUrl, L, "events", { topic: "shop/eu/paid", pageNumber: "2", pageSize: "1" }));
    expect(paged).toMatchObject({ total: 2, pageIndex: 2, pageSize: 1, pageData: [expect.objectContaining({ eventId: ids[0] })] });
  });

  it("refuses an unbounded or bad search with its documented code, never a 5xx", async () => {
    const cases: [Record<string, string>, number][] = [
      [{}, 100308],
      [{ from: "1000" }, 100308],
      [{ topic: "a/#/b" }, 100109],
      [{ topic: "t", from: "tomorrow" }, 100309],
      [{ eventId: "bad" }, 100302],
      [{ topic: "t", pageNumber: "200", pageSize: "100" }, 100310],
      [{ topic: "t", pageSize: "0" }, 100107],
    ];
    for (const [params, code] of cases) {
      for (const mount of [L, M, E]) {
        const r = await call(sys.gatewayUrl, `${mount}/admin/events`, params);
        expect(r.status, `${mount} ${JSON.stringify(params)}`).toBe(200);
        expect((r.json as { code: number }).code, `${mount} ${JSON.stringify(params)}`).toBe(code);
      }
    }
  });

  it("shows one event's deliveries per matching subscription, with its attempts", async () => {
    await expect
      .poll(async () => data<Page<Delivery>>(await admin(sys.gatewayUrl, L, "eventDeliveries", { eventId: ids[0] as string })).pageData)
      .toEqual([
        expect.objectContaining({ subscriptionId: sub, state: "delivered", attempts: [expect.objectContaining({ delivered: true })] }),
      ]);
    // No subscription matches "audit".
    expect(data<Page<Delivery>>(await admin(sys.gatewayUrl, M, "eventDeliveries", { eventId: ids[2] as string })).total).toBe(0);
    expect(await admin(sys.gatewayUrl, M, "eventDeliveries", { eventId: "abcdef12-1-999999" })).toMatchObject({ code: 100303 });
  });

  it("resends one event through normal delivery, marked as a resend with its own webhook-id", async () => {
    const before = rx.requests.length;
    const answer = data<{ resend: number }>(
      await admin(sys.gatewayUrl, M, "resendEvent", { subscriptionId: sub, eventId: ids[0] as string }),
    );
    expect(answer.resend).toBeGreaterThan(0);
    await rx.until(() => rx.requests.length > before, "the resend");
    const got = rx.requests[before];
    expect(got?.headers["webhook-resend"]).toBe("true");
    expect(got?.headers["webhook-id"]).toBe(`msg_${sub}_${ids[0]}_resend${answer.resend}`);
    expect(JSON.parse(got?.body ?? "{}").event.eventId).toBe(ids[0]);
    // An event the subscription does not match, and an unknown subscription, are refused.
    expect(await admin(sys.gatewayUrl, M, "resendEvent", { subscriptionId: sub, eventId: ids[2] as string })).toMatchObject({
      code: 100511,
    });
    expect(
      await admin(sys.gatewayUrl, M, "resendEvent", { subscriptionId: "00000000-0000-4000-8000-000000000000", eventId: ids[0] as string }),
    ).toMatchObject({ code: 100504 });
  });

  it("replays a subscription from an event: every matching event from there again, in order", async () => {
    const before = rx.requests.length;
    expect(data(await admin(sys.gatewayUrl, M, "replayDeadLetters", { subscriptionId: sub, fromEventId: ids[1] as string }))).toEqual([
      sub,
    ]);
    await rx.until(() => rx.requests.length >= before + 2, "the replay");
    const replayed = rx.requests.slice(before).map((r) => JSON.parse(r.body).event.eventId);
    expect(replayed).toEqual([ids[1], ids[3]]);
    expect(await admin(sys.gatewayUrl, M, "replayDeadLetters", { fromTime: "1000" })).toMatchObject({ code: 100512 });
    expect(
      await admin(sys.gatewayUrl, M, "replayDeadLetters", { subscriptionId: sub, fromTime: "1000", fromEventId: ids[1] as string }),
    ).toMatchObject({ code: 100512 });
  });

  it("evb-client and evb do all four, typed", async () => {
    const client = new BrokerClientL({ baseUrl: `${sys.gatewayUrl}${L}` });
    const page = await client.events({ topic: "shop/#", from: new Date(0), to: new Date(Date.now() + 60_000) });
    expect(page.pageData.map((e) => e.eventId)).toEqual([ids[3], ids[1], ids[0]]);
    const deliveries = await new BrokerClientE({ baseUrl: `${sys.gatewayUrl}${E}` }).eventDeliveries(ids[3] as string);
    expect(deliveries.pageData[0]).toMatchObject({ subscriptionId: sub, topicName: "shop/+/paid" });
    expect((await client.resendEvent(sub, ids[3] as string)).eventId).toBe(ids[3]);
    expect(await client.replayFrom(sub, { time: Date.now() + 60_000 })).toEqual([sub]);

    const env = { EVB_URL: sys.gatewayUrl };
    const search = await runEvb(["event", "search", "--topic", "shop/eu/paid", "--json"], { env });
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).pageData.map((e: Listed) => e.eventId)).toEqual([ids[3], ids[0]]);
    const shown = await runEvb(["event", "deliveries", ids[0] as string], { env });
    expect(shown.stdout).toContain(sub);
    expect((await runEvb(["event", "resend", ids[0] as string, sub], { env })).stdout).toMatch(/^resend \d+ of /);
    expect((await runEvb(["dead-letters", "replay", sub, "--from-event", ids[3] as string], { env })).stdout).toBe(`replaying ${sub}\n`);
    expect(await runEvb(["event", "search"], { env })).toMatchObject({ code: 2 });
    expect((await runEvb(["--help"], { env })).stdout).toContain("event resend <eventId> <subscriptionId>");
  });
});
