import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Packet } from "mqtt-packet";
import { type ApiRole, ApiKeyStore, poolOptions } from "@evb/storage";
import { uniqueTopic } from "./support/broker-expect.ts";
import { callFrom } from "./support/http-from.ts";
import { frame, hdr, RawStomp, stompUrl } from "./support/stomp.ts";
import { TestSystem } from "./support/system.ts";
import { mqttEnv, RawMqtt } from "./mqtt/raw-mqtt.ts";
import { createKey } from "./support/api-keys.ts";

const L = "/event-broker";
const PING: Packet = { cmd: "pingreq" };

/** A persistent MQTT 5 session's CONNECT fields (kept 5 minutes after its connection ends). */
const persistent = (clientId: string, key: string, group = "1") =>
  ({
    clientId,
    clean: false,
    username: "key",
    password: Buffer.from(key),
    properties: { sessionExpiryInterval: 300, userProperties: { groupId: group } },
  }) as const;

/** Whether the connection still answers (PINGREQ → PINGRESP). */
async function alive(c: RawMqtt): Promise<boolean> {
  const n = c.packets.length;
  c.send(PING);
  return (await c.next(n)).cmd === "pingresp";
}

// Crash survived: none. Long-lived sessions keep their owner's rights (issue 28, docs/security.md
// "Sessions"): MQTT client ids and stored sessions and STOMP subscription ids belong to the key
// that made them; a revoked key's sessions end within API_KEY_CACHE_MS.
describe("sessions with API keys", () => {
  let sys: TestSystem;
  let pool: pg.Pool;
  let store: ApiKeyStore;
  let port: number;
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const open: Array<{ close(): void }> = [];
  const topic = uniqueTopic("sess");

  const make = async (name: string, roles: ApiRole[], groups: string[]) => {
    const k = await createKey(store, { name, roles, groups: groups, publishRate: null, publishBurst: null });
    keys[name] = k.key;
    ids[name] = k.id;
  };
  const mqtt = async (version: 4 | 5 = 5) => {
    const c = await RawMqtt.open(port, version);
    open.push({ close: () => c.destroy() });
    return c;
  };
  const stomp = async (key: string) => {
    const r = await RawStomp.open(stompUrl(sys.gatewayUrl));
    open.push(r);
    expect((await r.connect({ passcode: key })).command).toBe("CONNECTED");
    return r;
  };
  const reply = async (r: RawStomp, text: string) => {
    const n = r.frames.length;
    r.send(text);
    return r.nth(n);
  };

  beforeAll(async () => {
    const env = await mqttEnv({ GROUP_IDS: "1,2", API_KEYS: "true", API_KEY_CACHE_MS: "300" });
    port = Number(env.MQTT_PORT);
    sys = await TestSystem.start({ env });
    pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 2));
    store = new ApiKeyStore(pool);
    await make("admin", ["admin"], ["*"]);
    await make("owner2", ["subscribe", "publish"], ["2"]);
    await make("pub1", ["publish"], ["1"]);
    await make("subA", ["subscribe"], ["1"]);
    await make("subB", ["subscribe"], ["1"]);
    await make("doomed", ["publish", "subscribe"], ["1"]);
    for (const group of ["1", "2"]) {
      const r = await callFrom(
        "127.0.0.1",
        sys.gatewayUrl,
        `${L}/rest/open`,
        { topic, groupId: group },
        { authorization: `Bearer ${keys.admin}` },
      );
      expect(r.json).toMatchObject({ code: 0 });
    }
  });
  afterAll(async () => {
    for (const o of open) o.close();
    await pool?.end();
    await sys?.stop();
  });

  it("MQTT: another key's CONNECT with a persistent session's client id is refused (0x85; 3.1.1: 2), the owner stays connected and its session whole", async () => {
    const owner = await mqtt();
    const clientId = `own-${Date.now()}`;
    expect(await owner.connect(persistent(clientId, keys.owner2 as string, "2"))).toMatchObject({ cmd: "connack", reasonCode: 0 });
    let n = owner.packets.length;
    owner.send({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos: 1 }] });
    expect(await owner.next(n)).toMatchObject({ cmd: "suback", granted: [1] });

    const stranger = await mqtt();
    expect(await stranger.connect(persistent(clientId, keys.pub1 as string))).toMatchObject({ cmd: "connack", reasonCode: 0x85 });
    expect(await stranger.closedWithin(10_000)).toBe(true);
    const clean = await mqtt(4);
    const cleanAck = await clean.connect({ clientId, clean: true, username: "key", password: Buffer.from(keys.pub1 as string) });
    expect(cleanAck).toMatchObject({ cmd: "connack", returnCode: 2 });
    expect(await alive(owner)).toBe(true);

    // The stored session is still the owner's: its filter comes back with sessionPresent.
    owner.send({ cmd: "disconnect" });
    await owner.closedWithin(10_000);
    const back = await mqtt();
    expect(await back.connect(persistent(clientId, keys.owner2 as string, "2"))).toMatchObject({
      cmd: "connack",
      reasonCode: 0,
      sessionPresent: true,
    });
    n = back.packets.length;
    back.send({ cmd: "unsubscribe", messageId: 2, unsubscriptions: [topic] });
    expect(await back.next(n)).toMatchObject({ cmd: "unsuback", granted: [0] });
  });

  it("MQTT: a live connection's client id (no stored session) is not taken by another key; the same key takes it over", async () => {
    const owner = await mqtt();
    const clientId = `live-${Date.now()}`;
    expect(await owner.connect({ clientId, username: "key", password: Buffer.from(keys.subA as string) })).toMatchObject({ reasonCode: 0 });
    const stranger = await mqtt();
    expect(await stranger.connect({ clientId, username: "key", password: Buffer.from(keys.subB as string) })).toMatchObject({
      reasonCode: 0x85,
    });
    expect(await alive(owner)).toBe(true);
    const again = await mqtt();
    expect(await again.connect({ clientId, username: "key", password: Buffer.from(keys.subA as string) })).toMatchObject({ reasonCode: 0 });
    expect(await owner.closedWithin(10_000)).toBe(true);
  });

  it("STOMP: another key cannot resume a subscription id (100507); its owner's resume is taken", async () => {
    const owner = await stomp(keys.subA as string);
    const first = await reply(owner, frame("SUBSCRIBE", { destination: topic, id: "1", eventId: "OFFSET_LAST" }));
    expect(first.command).toBe("RECEIPT");
    const id = hdr(first, "subscription-id") as string;
    owner.close();
    await owner.closed();

    const squatter = await stomp(keys.subB as string);
    const squat = await reply(
      squatter,
      frame("SUBSCRIBE", { destination: topic, id: "2", eventId: "OFFSET_LAST", "event-subscriptionId": id }),
    );
    expect([squat.command, hdr(squat, "code"), hdr(squat, "receipt-id")]).toEqual(["ERROR", "100507", "2"]);

    const back = await stomp(keys.subA as string);
    const resumed = await reply(
      back,
      frame("SUBSCRIBE", { destination: topic, id: "3", eventId: "OFFSET_LAST", "event-subscriptionId": id }),
    );
    expect([resumed.command, hdr(resumed, "subscription-id")]).toEqual(["RECEIPT", id]);
  });

  it("a revoked key's STOMP and MQTT sessions are ended (STOMP ERROR, MQTT 5 DISCONNECT 0x87) and publish no more", async () => {
    const s = await stomp(keys.doomed as string);
    expect((await reply(s, frame("SEND", { destination: topic, receipt: "r1" }, "before"))).command).toBe("RECEIPT");
    const m = await mqtt();
    expect(
      await m.connect({ clientId: `doomed-${Date.now()}`, username: "key", password: Buffer.from(keys.doomed as string) }),
    ).toMatchObject({
      reasonCode: 0,
    });
    const n = m.packets.length;
    m.send({ cmd: "publish", topic, payload: Buffer.from("before"), qos: 1, messageId: 7, retain: false, dup: false });
    expect(await m.next(n)).toMatchObject({ cmd: "puback", messageId: 7, reasonCode: 0 });

    expect(await store.revoke(ids.doomed as string, Date.now())).toBe(true);
    expect(await s.closed()).toBe(1008);
    expect(s.frames.at(-1)).toMatchObject({ command: "ERROR" });
    expect(hdr(s.frames.at(-1) as never, "message")).toMatch(/no longer valid/);
    expect(await m.closedWithin(15_000)).toBe(true);
    expect(m.packets.at(-1)).toMatchObject({ cmd: "disconnect", reasonCode: 0x87 });
  });
});

// Open mode: a session's identity is the address it comes from (every 127/8 address is loopback,
// so 127.0.0.2 is another caller on this machine).
describe("sessions in open mode", () => {
  let sys: TestSystem;
  let port: number;
  const open: RawMqtt[] = [];

  beforeAll(async () => {
    const env = await mqttEnv();
    port = Number(env.MQTT_PORT);
    sys = await TestSystem.start({ env });
  });
  afterAll(async () => {
    for (const c of open) c.destroy();
    await sys?.stop();
  });

  it("MQTT: a client id held from one address is refused from another, and taken over from the same", async () => {
    const from = async (address: string) => {
      const c = await RawMqtt.open(port, 5, address);
      open.push(c);
      return c;
    };
    const clientId = `open-${Date.now()}`;
    const owner = await from("127.0.0.1");
    expect(await owner.connect({ clientId, clean: false, properties: { sessionExpiryInterval: 300 } })).toMatchObject({ reasonCode: 0 });
    const other = await from("127.0.0.2");
    expect(await other.connect({ clientId, clean: true })).toMatchObject({ reasonCode: 0x85 });
    expect(await alive(owner)).toBe(true);
    const same = await from("127.0.0.1");
    expect(await same.connect({ clientId, clean: true })).toMatchObject({ reasonCode: 0 });
    expect(await owner.closedWithin(10_000)).toBe(true);
  });
});
