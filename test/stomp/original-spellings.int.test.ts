import type { Client, IFrame } from "@stomp/stompjs";
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBrokerError, expectSuccess, uniqueTopic } from "../support/broker-expect.ts";
import { call } from "../support/http.ts";
import { frame, hdr, Inbox, type RawFrame, RawStomp, stompClient, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";
import { mqttWsUrl, openClient } from "../mqtt/raw-mqtt.ts";

type Event = { topic: string; content: string; extensions: Record<string, string>; eventId: string };

/** Variant L where the original Java client looks for it (its tests: http://localhost:7000/weevent-broker). */
const ORIGINAL = "/weevent-broker";
const NEUTRAL = "/event-broker";

// Crash survived: none (BRAND=weevent beside the default on one healthy system, real sockets).
describe("the original spellings on request: BRAND=weevent beside the default (protocols.md 8)", () => {
  let sys: TestSystem;
  /** The default gateway: BRAND unset, VARIANTS default. */
  let plain: string;
  /** BRAND=weevent, variant L mounted at /weevent-broker. */
  let branded: string;
  const T = uniqueTopic("com.weevent.test");
  const raws: RawStomp[] = [];
  const clients: Client[] = [];
  const mqttClients: MqttClient[] = [];

  beforeAll(async () => {
    const quick = { STOMP_POLL_MS: "300", STOMP_HEARTBEAT_MS: "1000" };
    sys = await TestSystem.start({ gatewayEnv: quick });
    plain = sys.gatewayUrl;
    branded = await sys.addGateway("gateway-weevent", { ...quick, BRAND: "weevent", VARIANTS: `L:${ORIGINAL},M:/event-m,E:/event-e` });
    expectSuccess(await call(branded, `${ORIGINAL}/rest/open`, { topic: T }), "L");
  });
  afterAll(async () => {
    for (const r of raws) r.close();
    for (const c of clients) await c.deactivate();
    for (const c of mqttClients) await c.endAsync(true).catch(() => {});
    await sys?.stop();
  });

  const publish = async (base: string, context: string, params: Record<string, string>): Promise<string> => {
    const r = await call(base, `${context}/rest/publish`, { topic: T, content: "hello world", ...params });
    const body = r.json as { status: string; eventId: string };
    expect(body.status, r.text).toBe("SUCCESS");
    return body.eventId;
  };
  const getEvent = async (base: string, context: string, eventId: string) =>
    expectSuccess(await call(base, `${context}/rest/getEvent`, { eventId }), "L") as Event;
  const keys = (e: Event) => Object.keys(e.extensions).sort();
  const raw = async (base: string, context: string) => {
    const r = await RawStomp.open(stompUrl(base, context));
    raws.push(r);
    await r.connect();
    return r;
  };
  const reply = async (r: RawStomp, text: string): Promise<RawFrame> => {
    const n = r.frames.length;
    r.send(text);
    return r.nth(n);
  };
  const messages = (r: RawStomp) => r.frames.filter((f) => f.command === "MESSAGE");

  it("HTTP, BRAND=weevent: weevent- parameters become extensions and getEvent answers them with weevent-plus; event- ones are ignored", async () => {
    const id = await publish(branded, ORIGINAL, { "weevent-tag": "test", "weevent-format": "json", "event-x": "1" });
    const e = await getEvent(branded, ORIGINAL, id);
    expect(keys(e)).toEqual(["weevent-format", "weevent-plus", "weevent-tag"]);
    expect(e.extensions["weevent-tag"]).toBe("test");
    expect(e.extensions["weevent-format"]).toBe("json");
    expect(JSON.parse(e.extensions["weevent-plus"] as string)).toMatchObject({ height: expect.any(Number), txHash: expect.any(String) });
  });

  it("HTTP, default: the wire is unchanged (weevent- parameters ignored, event-plus); BRAND=weevent shows that event's names in the original spelling", async () => {
    const id = await publish(plain, NEUTRAL, { "event-tag": "n", "weevent-format": "json" });
    const neutral = await getEvent(plain, NEUTRAL, id);
    expect(keys(neutral)).toEqual(["event-plus", "event-tag"]);
    const original = await getEvent(branded, ORIGINAL, id);
    expect(keys(original)).toEqual(["weevent-plus", "weevent-tag"]);
    expect(original.extensions["weevent-tag"]).toBe("n");
    expect(original.extensions["weevent-plus"]).toBe(neutral.extensions["event-plus"]);
  });

  it("HTTP, BRAND=weevent: validateGroupId at the original path answers 200211 for an unknown group (the Java client's build())", async () => {
    expectBrokerError(await call(branded, `${ORIGINAL}/admin/validateGroupId`, { groupId: "notExist" }), "L", 200211);
  });

  it("STOMP (stompjs), BRAND=weevent: SEND with weevent- headers; a weevent-tag SUBSCRIBE gets only tagged MESSAGEs, with weevent- headers and weevent-plus only", async () => {
    const c = await stompClient(stompUrl(branded, ORIGINAL));
    clients.push(c);
    const receipt = (id: string) => new Promise<IFrame>((resolve) => c.watchForReceipt(id, resolve));
    const subscribed = receipt("s1");
    const inbox = new Inbox();
    c.subscribe(T, inbox.take, { id: "s1", eventId: "OFFSET_LAST", groupId: "1", "weevent-tag": "test" });
    await subscribed;
    const untagged = receipt("p0");
    c.publish({ destination: T, body: "untagged", headers: { receipt: "p0", groupId: "1" } });
    await untagged;
    const sent = receipt("p1");
    c.publish({
      destination: T,
      body: "hello world",
      headers: { receipt: "p1", groupId: "1", "weevent-tag": "test", "weevent-format": "json" },
    });
    const eventId = (await sent).headers.eventId as string;
    const [m] = await inbox.count(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(inbox.messages.map((x) => x.body)).toEqual(["hello world"]);
    expect(m?.headers.eventId).toBe(eventId);
    expect(m?.headers["weevent-tag"]).toBe("test");
    expect(m?.headers["weevent-format"]).toBe("json");
    expect(JSON.parse(m?.headers["weevent-plus"] as string)).toMatchObject({ height: expect.any(Number) });
    expect(Object.keys(m?.headers ?? {}).filter((k) => k.startsWith("event-"))).toEqual([]);
    // testPublishExtensions: getEvent answers the extensions under their original names.
    expect(keys(await getEvent(branded, ORIGINAL, eventId))).toEqual(["weevent-format", "weevent-plus", "weevent-tag"]);
  });

  it("STOMP, BRAND=weevent: a live weevent-subscriptionId is 100507; after UNSUBSCRIBE it continues under the same id (testContinueSubscribe)", async () => {
    const r = await raw(branded, ORIGINAL);
    const first = await reply(
      r,
      frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "1", groupId: "1", "weevent-tag": "test" }),
    );
    expect(first.command).toBe("RECEIPT");
    const id = hdr(first, "subscription-id") as string;
    const live = await reply(r, frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "2", "weevent-subscriptionId": id }));
    expect([live.command, hdr(live, "code"), hdr(live, "receipt-id")]).toEqual(["ERROR", "100507", "2"]);
    const gone = await reply(r, frame("UNSUBSCRIBE", { simpSubscriptionId: "1", subscription: id, id: "1" }));
    expect([gone.command, hdr(gone, "receipt-id")]).toEqual(["RECEIPT", "1"]);
    const again = await reply(r, frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "3", "weevent-subscriptionId": id }));
    expect(again.command).toBe("RECEIPT");
    expect(hdr(again, "subscription-id")).toBe(id);
  });

  it("STOMP MESSAGE of one event: the default gateway writes the neutral headers only (event-plus), BRAND=weevent the original names only", async () => {
    const neutral = await raw(plain, NEUTRAL);
    const original = await raw(branded, ORIGINAL);
    for (const r of [neutral, original]) {
      expect((await reply(r, frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "9" }))).command).toBe("RECEIPT");
    }
    const sender = await raw(plain, NEUTRAL);
    const sent = await reply(sender, frame("SEND", { destination: T, receipt: "1", "event-tag": "n" }, "from the default gateway"));
    expect(sent.command).toBe("RECEIPT");
    for (const r of [neutral, original]) await r.until(() => messages(r).some((m) => m.body === "from the default gateway"));
    const names = (r: RawStomp) =>
      messages(r)
        .find((m) => m.body === "from the default gateway")
        ?.headers.map(([k]) => k);
    const around = (ext: string[]) => [
      "subscription",
      "subscription-id",
      "message-id",
      "destination",
      "content-type",
      ...ext,
      "eventId",
      "content-length",
    ];
    expect(names(neutral)).toEqual(around(["event-tag", "event-plus"]));
    expect(names(original)).toEqual(around(["weevent-tag", "weevent-plus"]));
  });

  it("STOMP, default: weevent- headers are ordinary ones: not stored on SEND, no tag filter and no continued id on SUBSCRIBE", async () => {
    const r = await raw(plain, NEUTRAL);
    const sub = await reply(r, frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "d1", "weevent-tag": "only-this" }));
    expect(sub.command).toBe("RECEIPT");
    const id = hdr(sub, "subscription-id") as string;
    // A live id named in the original spelling is not read: a new subscription, not 100507.
    const other = await reply(r, frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "d2", "weevent-subscriptionId": id }));
    expect(other.command).toBe("RECEIPT");
    expect(hdr(other, "subscription-id")).not.toBe(id);
    const sent = await reply(
      r,
      frame("SEND", { destination: T, receipt: "d3", "weevent-format": "json", "event-tag": "n" }, "default spelling"),
    );
    expect(sent.command).toBe("RECEIPT");
    expect(keys(await getEvent(plain, NEUTRAL, hdr(sent, "eventId") as string))).toEqual(["event-plus", "event-tag"]);
    // Untagged as far as the default gateway reads it: the weevent-tag SUBSCRIBE takes the event.
    await r.until(() => messages(r).some((m) => m.body === "default spelling" && hdr(m, "subscription") === "d1"));
    const m = messages(r).find((x) => x.body === "default spelling") as RawFrame;
    expect(m.headers.map(([k]) => k).filter((k) => k.startsWith("weevent-"))).toEqual([]);
  });

  it("MQTT, BRAND=weevent: a dropped client's will carries weevent-willmessage, key and value", async () => {
    const watcher = await raw(branded, ORIGINAL);
    expect((await reply(watcher, frame("SUBSCRIBE", { destination: T, eventId: "OFFSET_LAST", id: "w" }))).command).toBe("RECEIPT");
    const { client } = await openClient(mqttWsUrl(branded, ORIGINAL), {
      will: { topic: T, payload: Buffer.from("gone"), qos: 0, retain: false },
    });
    mqttClients.push(client);
    client.stream.destroy();
    await watcher.until(() => messages(watcher).some((m) => m.body === "gone"));
    const will = messages(watcher).find((m) => m.body === "gone") as RawFrame;
    expect(hdr(will, "weevent-willmessage")).toBe("weevent-willmessage");
    expect(hdr(will, "event-willmessage")).toBeUndefined();
  });
});
