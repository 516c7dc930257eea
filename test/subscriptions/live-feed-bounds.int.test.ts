import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { Scrape } from "../support/scrape.ts";
import { frame, hdr, RawStomp, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";
import { mqttEnv, openClient, RawMqtt } from "../mqtt/raw-mqtt.ts";

/** Idle filters held while blocks are sealed: 3 connections of 1,000, under caps raised for the test. */
const CONNECTIONS = 3;
const FILTERS = 1_000;
const BLOCKS = 10;

// Crash survived: none (issue 28: subscription shapes that cost the gateway per pattern, over real sockets).
describe("live subscriptions cost per block what their blocks hold, not per filter", () => {
  let sys: TestSystem;
  let port: number;
  const clients: MqttClient[] = [];
  const T = uniqueTopic("feeds");

  beforeAll(async () => {
    const env = await mqttEnv({
      MAX_SUBSCRIPTIONS_PER_CALLER: String(CONNECTIONS * FILTERS + 100),
      MAX_TOPIC_FILTERS_PER_CALLER: String(CONNECTIONS * FILTERS + 100),
      DATABASE_FEED_POOL_SIZE: "2",
      STOMP_POLL_MS: "60000",
    });
    port = Number(env.MQTT_PORT);
    sys = await TestSystem.start({ gatewayEnv: env });
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: T }), "L");
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => {});
    await sys?.stop();
  });

  const mqtt = async () => {
    const c = await openClient(`mqtt://127.0.0.1:${port}`, { protocolVersion: 5 });
    clients.push(c.client);
    return c;
  };
  const reads = async (read: string) => (await Scrape.of(sys.gatewayUrl)).value("evb_ledger_feed_reads_total", { read }) ?? 0;
  const publish = async (content: string) => {
    const r = await rest(sys.gatewayUrl, "L", "publish", { topic: T, content }, "POST");
    return (r.json as { eventId: string }).eventId;
  };

  it("3,000 idle MQTT filters: a block costs one topic read, not a read per filter, and getEvent answers meanwhile", async () => {
    for (let c = 0; c < CONNECTIONS; c++) {
      const { client } = await mqtt();
      const granted = await client.subscribeAsync(
        Array.from({ length: FILTERS }, (_, i) => `idle/${c}/${i}/+`),
        { qos: 0 },
      );
      expect(granted.filter((g) => g.qos === 0)).toHaveLength(FILTERS);
    }
    const live = await mqtt();
    await live.client.subscribeAsync(T, { qos: 1 });
    const pages = await reads("page");
    const topics = await reads("topics");
    let last = "";
    for (let b = 0; b < BLOCKS; b++) last = await publish(`b${b}`);
    await live.log.count(BLOCKS);
    const got = await rest(sys.gatewayUrl, "L", "getEvent", { eventId: last });
    expect((expectSuccess(got, "L") as { eventId: string }).eventId).toBe(last);
    // The one filter the blocks concern reads them (a page or two a block); the 3,000 others read nothing.
    const pageReads = (await reads("page")) - pages;
    expect(pageReads).toBeGreaterThan(0);
    expect(pageReads).toBeLessThanOrEqual(2 * BLOCKS);
    expect((await reads("topics")) - topics).toBeLessThanOrEqual(BLOCKS);
  });

  it("a caller's filters are capped over all its connections: past MAX_TOPIC_FILTERS_PER_CALLER a SUBSCRIBE gets 0x97", async () => {
    const raw = await RawMqtt.open(port, 5);
    try {
      expect(await raw.connect({ clientId: "capped" })).toMatchObject({ cmd: "connack", reasonCode: 0 });
      const n = raw.packets.length;
      raw.send({
        cmd: "subscribe",
        messageId: 7,
        subscriptions: Array.from({ length: 200 }, (_, i) => ({ topic: `more/${i}/+`, qos: 0 as const })),
      });
      const suback = (await raw.next(n)) as { cmd: string; granted: number[] };
      expect(suback.cmd).toBe("suback");
      // 3,001 are held by this address's other connections (the case before); 99 more fit.
      expect(suback.granted.slice(0, 99).every((g) => g === 0)).toBe(true);
      expect(suback.granted.slice(99).every((g) => g === 0x97)).toBe(true);
    } finally {
      raw.destroy();
    }
  });

  it("STOMP: a destination of 12,000 patterns is 100110; one of 100 reads from OFFSET_FIRST and delivers", async () => {
    // Another caller (this address holds its quota in full since the cases before).
    const stomp = await RawStomp.open(stompUrl(sys.gatewayUrl), { localAddress: "127.0.0.2" });
    try {
      await stomp.connect();
      let n = stomp.frames.length;
      stomp.send(
        frame("SUBSCRIBE", { destination: Array.from({ length: 12_000 }, () => "+").join(","), id: "long", eventId: "OFFSET_FIRST" }),
      );
      const refused = await stomp.nth(n);
      expect([refused.command, hdr(refused, "code"), hdr(refused, "receipt-id")]).toEqual(["ERROR", "100110", "long"]);
      n = stomp.frames.length;
      const items = [...Array.from({ length: 99 }, (_, i) => `+/x${i}`), T];
      stomp.send(frame("SUBSCRIBE", { destination: items.join(","), id: "list", eventId: "OFFSET_FIRST" }));
      expect((await stomp.nth(n)).command).toBe("RECEIPT");
      const messages = await stomp.until((f) => f.filter((x) => x.command === "MESSAGE").length >= BLOCKS);
      expect(messages.filter((x) => x.command === "MESSAGE").every((m) => hdr(m, "destination") === T)).toBe(true);
    } finally {
      stomp.close();
    }
  });
});
