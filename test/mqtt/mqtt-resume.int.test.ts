import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson200, expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { mqttWsUrl, openClient } from "./raw-mqtt.ts";

// Crash survived: SIGKILL of the gateway a persistent MQTT subscriber is connected to, mid-stream.
describe("MQTT persistent sessions survive the gateway", () => {
  let sys: TestSystem;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 2, gatewayEnv: { STOMP_POLL_MS: "500", STOMP_PAGE_EVENTS: "7", MQTT_MAX_INFLIGHT: "5" } });
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => {});
    await sys?.stop();
  });

  const session = async (gateway: string, clientId: string) => {
    const c = await openClient(mqttWsUrl(sys.originOf(gateway)), {
      clientId,
      clean: false,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
    });
    clients.push(c.client);
    return c;
  };
  /** Publishes over HTTP through gateway-2, one after another; each SUCCESS fixes the ledger order. */
  const publish = async (topic: string, content: string) => {
    const sent = expectJson200(await rest(sys.originOf("gateway-2"), "L", "publish", { topic, content }, "POST")) as { status: string };
    expect(sent.status, content).toBe("SUCCESS");
  };
  const bodies = (log: { messages: { payload: Buffer }[] }) => log.messages.map((m) => m.payload.toString());

  it("a client resuming its session after its gateway was SIGKILLed gets every event in order, from its last acknowledged one", async () => {
    const t = uniqueTopic("resume");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const id = uniqueTopic("survivor");
    const before = await session("gateway-1", id);
    await before.client.subscribeAsync(t, { qos: 1 });
    const all = Array.from({ length: 60 }, (_, i) => `m${i}`);
    const publishing = (async () => {
      for (const content of all) await publish(t, content);
    })();
    await before.log.count(15);
    await sys.kill("gateway-1");
    const seen = bodies(before.log);
    expect(seen.length).toBeLessThan(all.length);
    await sys.restart("gateway-1");
    const after = await session("gateway-1", id);
    expect(after.log.connack?.sessionPresent).toBe(true);
    await publishing;
    // Events acknowledged after the last stored position come again (at least once); none is skipped.
    await after.log.count(all.length - seen.length, 30_000);
    const resumed = bodies(after.log);
    await new Promise((r) => setTimeout(r, 500));
    const from = all.indexOf(resumed[0] as string);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(from).toBeLessThanOrEqual(seen.length);
    expect(seen).toEqual(all.slice(0, seen.length));
    expect(bodies(after.log)).toEqual(all.slice(from));
  });

  it("a session resumes on another gateway: its filters and positions are in Redis, not in the gateway", async () => {
    const t = uniqueTopic("elsewhere");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const id = uniqueTopic("mover");
    const first = await session("gateway-1", id);
    await first.client.subscribeAsync(t, { qos: 1 });
    await publish(t, "e1");
    await first.log.count(1);
    await first.client.endAsync();
    for (const content of ["e2", "e3"]) await publish(t, content);
    const second = await session("gateway-2", id);
    expect(second.log.connack?.sessionPresent).toBe(true);
    expect(bodies({ messages: await second.log.count(2) })).toEqual(["e2", "e3"]);
  });
});
