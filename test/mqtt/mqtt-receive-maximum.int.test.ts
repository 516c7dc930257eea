import type { Packet } from "mqtt-packet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { mqttEnv, openClient, RawMqtt } from "./raw-mqtt.ts";

/** STOMP_MAX_PENDING_PUBLISHES here: the Receive Maximum MQTT 5 clients are told. */
const RECEIVE_MAXIMUM = 8;

// Crash survived: none (MQTT 5 flow control, MQTT 5.0 4.9, over real TCP sockets; issue 22 leftovers).
describe("MQTT Receive Maximum (protocols.md, MQTT PUBLISH)", () => {
  let sys: TestSystem;
  let port: number;
  const T = uniqueTopic("rm");
  const raws: RawMqtt[] = [];

  beforeAll(async () => {
    const env = await mqttEnv();
    port = Number(env.MQTT_PORT);
    sys = await TestSystem.start({ env: { STOMP_MAX_PENDING_PUBLISHES: String(RECEIVE_MAXIMUM) }, gatewayEnv: env });
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: T }), "L");
  });
  afterAll(async () => {
    for (const r of raws) r.destroy();
    await sys?.stop();
  });

  const raw = async (version: 4 | 5) => {
    const r = await RawMqtt.open(port, version);
    raws.push(r);
    return r;
  };
  const publishes = (from: number, count: number): Packet[] =>
    Array.from({ length: count }, (_, i) => ({
      cmd: "publish",
      topic: T,
      payload: `rm ${from + i}`,
      qos: 1,
      messageId: from + i,
      dup: false,
      retain: false,
    }));
  const acks = (r: RawMqtt) => r.packets.filter((p) => p.cmd === "puback").map((p) => p.messageId);

  it("MQTT 5: CONNACK announces the Receive Maximum; that many in flight are acknowledged in order", async () => {
    const r = await raw(5);
    expect(await r.connect({ clientId: "rm-within" })).toMatchObject({ cmd: "connack", properties: { receiveMaximum: RECEIVE_MAXIMUM } });
    for (const p of publishes(1, RECEIVE_MAXIMUM)) r.send(p);
    await r.until(() => acks(r).length === RECEIVE_MAXIMUM);
    expect(acks(r)).toEqual(Array.from({ length: RECEIVE_MAXIMUM }, (_, i) => i + 1));
    // Freed places are taken again: the next round is within the limit too.
    for (const p of publishes(101, RECEIVE_MAXIMUM)) r.send(p);
    await r.until(() => acks(r).length === 2 * RECEIVE_MAXIMUM);
    expect(r.closed).toBe(false);
  });

  it("MQTT 5: a QoS 1 PUBLISH past the Receive Maximum in flight is DISCONNECT 0x93, then the close", async () => {
    const r = await raw(5);
    await r.connect({ clientId: "rm-past" });
    // All in one write, before any PUBACK could come back: far more than the limit in flight.
    for (const p of publishes(1, RECEIVE_MAXIMUM * 5)) r.send(p);
    expect(await r.closedWithin(10_000)).toBe(true);
    expect(r.packets.at(-1)).toMatchObject({ cmd: "disconnect", reasonCode: 0x93 });
    expect(acks(r).length).toBeLessThanOrEqual(RECEIVE_MAXIMUM);
  });

  it("mqtt.js (5.16, which does not keep to a server's Receive Maximum) sending more at once is told 0x93", async () => {
    const { client } = await openClient(`mqtt://127.0.0.1:${port}`, { protocolVersion: 5, clientId: "rm-mqttjs" });
    const told = new Promise<number | undefined>((resolve) => client.once("disconnect", (p) => resolve(p.reasonCode)));
    client.on("error", () => {});
    try {
      for (let i = 0; i < RECEIVE_MAXIMUM * 5; i++) client.publishAsync(T, `mqtt.js ${i}`, { qos: 1 }).catch(() => {});
      expect(await told).toBe(0x93);
    } finally {
      await client.endAsync(true);
    }
  });

  it("MQTT 3.1.1 has no Receive Maximum: past STOMP_MAX_PENDING_PUBLISHES the connection reads on as PUBACKs go out", async () => {
    const r = await raw(4);
    await r.connect({ clientId: "rm-311" });
    const count = RECEIVE_MAXIMUM * 5;
    for (const p of publishes(1, count)) r.send(p);
    await r.until(() => acks(r).length === count, 20_000);
    expect(acks(r)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(r.closed).toBe(false);
  });
});
