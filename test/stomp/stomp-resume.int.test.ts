import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson200, expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { frame, hdr, Inbox, type RawFrame, RawStomp, stompClient, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";

// Crash survived: SIGKILL of the gateway a STOMP subscriber is connected to, mid-stream.
describe("STOMP deliveries come from the ledger", () => {
  let sys: TestSystem;
  const sockets: RawStomp[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 2, gatewayEnv: { STOMP_POLL_MS: "500", STOMP_PAGE_EVENTS: "7" } });
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await sys?.stop();
  });

  const open = async (gateway: string) => {
    const r = await RawStomp.open(stompUrl(sys.originOf(gateway)));
    sockets.push(r);
    return r;
  };
  const subscribe = async (r: RawStomp, headers: Record<string, string>): Promise<RawFrame> => {
    const n = r.frames.length;
    r.send(frame("SUBSCRIBE", headers));
    return r.nth(n);
  };
  const bodies = (r: RawStomp) => r.frames.filter((f) => f.command === "MESSAGE").map((f) => f.body);
  /** Publishes over HTTP through gateway-2, one after another; each SUCCESS fixes the ledger order. */
  const publish = async (topic: string, content: string) => {
    const sent = expectJson200(await rest(sys.originOf("gateway-2"), "L", "publish", { topic, content }, "POST")) as { status: string };
    expect(sent.status, content).toBe("SUCCESS");
  };

  it("a client resuming with its subscription id and last eventId after its gateway was SIGKILLed gets every event once, in order", async () => {
    const t = uniqueTopic("resume");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const before = await open("gateway-1");
    const receipt = await subscribe(before, { destination: t, id: "1", eventId: "OFFSET_LAST" });
    const id = hdr(receipt, "subscription-id") as string;
    const all = Array.from({ length: 60 }, (_, i) => `m${i}`);
    const publishing = (async () => {
      for (const content of all) await publish(t, content);
    })();
    await before.until(() => bodies(before).length >= 15);
    await sys.kill("gateway-1");
    const seen = before.frames.filter((f) => f.command === "MESSAGE");
    const last = hdr(seen.at(-1) as RawFrame, "eventId") as string;
    await sys.restart("gateway-1");
    const after = await open("gateway-1");
    const resumed = await subscribe(after, { destination: t, id: "1", eventId: last, "event-subscriptionId": id });
    expect(resumed.command).toBe("RECEIPT");
    expect(hdr(resumed, "subscription-id")).toBe(id);
    await publishing;
    await after.until(() => seen.length + bodies(after).length >= all.length, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect([...seen.map((f) => f.body), ...bodies(after)]).toEqual(all);
  });

  it("a pattern and a list take several topics in ledger order, across pages of the ledger", async () => {
    const base = uniqueTopic("order");
    const topics = [`${base}/x`, `${base}/y`, `${base}/z`];
    for (const t of topics) expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const expected: string[] = [];
    for (let i = 0; i < 30; i++) {
      const t = topics[i % 3] as string;
      await publish(t, `${t}#${i}`);
      expected.push(`${t}#${i}`);
    }
    const r = await open("gateway-1");
    await subscribe(r, { destination: `${base}/#`, id: "p", eventId: "OFFSET_FIRST" });
    await subscribe(r, { destination: `${topics[0]},${topics[2]}`, id: "l", eventId: "OFFSET_FIRST" });
    const of = (handle: string) => r.frames.filter((f) => f.command === "MESSAGE" && hdr(f, "subscription") === handle).map((f) => f.body);
    await r.until(() => of("p").length >= 30 && of("l").length >= 20);
    expect(of("p")).toEqual(expected);
    expect(of("l")).toEqual(expected.filter((e) => !e.startsWith(`${topics[1]}#`)));
  });

  it("stompjs over ws: publish with a receipt, subscribe from history, one MESSAGE per event", async () => {
    const t = uniqueTopic("stompjs");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const c = await stompClient(stompUrl(sys.originOf("gateway-1")));
    try {
      const receipts = new Inbox();
      for (const n of [1, 2, 3]) {
        c.watchForReceipt(`r${n}`, (f) => receipts.take(f as never));
        c.publish({ destination: t, body: `hello ${n}`, headers: { receipt: `r${n}`, "event-format": "text" } });
      }
      const ids = (await receipts.count(3)).map((f) => f.headers.eventId);
      expect(new Set(ids).size).toBe(3);
      const inbox = new Inbox();
      c.subscribe(t, inbox.take, { eventId: "OFFSET_FIRST" });
      const got = await inbox.count(3);
      expect(got.map((m) => m.body)).toEqual(["hello 1", "hello 2", "hello 3"]);
      expect(got.map((m) => m.headers.eventId)).toEqual(ids);
      expect(got.every((m) => m.headers["event-format"] === "text")).toBe(true);
    } finally {
      await c.deactivate();
    }
  });
});
