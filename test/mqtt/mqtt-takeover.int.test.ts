import type { IDisconnectPacket, MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectJson200, expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { mqttWsUrl, openClient } from "./raw-mqtt.ts";

/** What an older connection saw of its end: the server's DISCONNECT (MQTT 5) and the close, in order of time. */
function watchEnd(client: MqttClient): { disconnect?: IDisconnectPacket; disconnectAt?: number; closedAt?: number } {
  const seen: { disconnect?: IDisconnectPacket; disconnectAt?: number; closedAt?: number } = {};
  client.on("disconnect", (p) => {
    seen.disconnect = p;
    seen.disconnectAt = Date.now();
  });
  client.on("close", () => {
    seen.closedAt ??= Date.now();
  });
  return seen;
}

async function until(pred: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

// MQTT-3.1.4-3 across gateways: the client id's owner in Redis and a take-over over the owning gateway's channel.
describe("MQTT client-id take-over across gateways", () => {
  let sys: TestSystem;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 2, gatewayEnv: { STOMP_POLL_MS: "500" } });
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => {});
    await sys?.stop();
  });

  const connect = async (gateway: string, clientId: string, protocolVersion: 4 | 5, clean = false) => {
    const c = await openClient(mqttWsUrl(sys.originOf(gateway)), {
      clientId,
      clean,
      protocolVersion,
      ...(protocolVersion === 5 && !clean ? { properties: { sessionExpiryInterval: 300 } } : {}),
    });
    clients.push(c.client);
    return c;
  };
  const publish = async (topic: string, content: string) => {
    const sent = expectJson200(await rest(sys.originOf("gateway-1"), "L", "publish", { topic, content }, "POST")) as { status: string };
    expect(sent.status, content).toBe("SUCCESS");
  };

  it("a CONNECT on another gateway ends the older connection (MQTT 5: DISCONNECT 0x8E) before its CONNACK, and resumes the stored session", async () => {
    const t = uniqueTopic("takeover");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const id = uniqueTopic("taken");
    const older = await connect("gateway-1", id, 5);
    const end = watchEnd(older.client);
    await older.client.subscribeAsync(t, { qos: 1 });
    await publish(t, "before");
    await older.log.count(1);

    const newer = await connect("gateway-2", id, 5);
    const connackAt = Date.now();
    await until(() => end.closedAt !== undefined);
    expect(end.disconnect?.reasonCode).toBe(0x8e);
    // The older one was ended (and its session stored) before the newer was answered.
    expect(end.disconnectAt).toBeLessThanOrEqual(connackAt);
    expect(newer.log.connack?.sessionPresent).toBe(true);

    await publish(t, "after");
    expect((await newer.log.count(1)).map((m) => m.payload.toString())).toEqual(["after"]);
    expect(older.log.messages.map((m) => m.payload.toString())).toEqual(["before"]);
  });

  it("MQTT 3.1.1: the older connection on the other gateway is closed, and taking the id back works the other way", async () => {
    const id = uniqueTopic("pingpong");
    const first = await connect("gateway-1", id, 4, true);
    const firstEnd = watchEnd(first.client);
    const second = await connect("gateway-2", id, 4, true);
    await until(() => firstEnd.closedAt !== undefined);
    const secondEnd = watchEnd(second.client);
    await connect("gateway-1", id, 4, true);
    await until(() => secondEnd.closedAt !== undefined);
  });

  it("one id connected twice at once on two gateways leaves one connection, not two", async () => {
    const id = uniqueTopic("race");
    const results = await Promise.allSettled([connect("gateway-1", id, 5), connect("gateway-2", id, 5)]);
    const opened = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.client] : []));
    // Take-overs are answered within a few seconds; then exactly one of them is still connected.
    await until(() => opened.filter((c) => c.connected).length <= 1, 10_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(opened.filter((c) => c.connected)).toHaveLength(1);
  });

  // Session identity (issue 28): in open mode a client id is its holder's address's; 127.0.0.2 is
  // another caller on this machine. The refusal comes from the owner entry in Redis, the holder
  // being on the other gateway.
  it("a CONNECT from another address on another gateway is refused (0x85) and leaves the holder connected; the same address takes over", async () => {
    const id = uniqueTopic("owned");
    const from = (gateway: string, localAddress: string) =>
      openClient(mqttWsUrl(sys.originOf(gateway)), { clientId: id, clean: true, protocolVersion: 5, wsOptions: { localAddress } });
    const holder = await from("gateway-1", "127.0.0.1");
    clients.push(holder.client);
    const seen = watchEnd(holder.client);
    const refused = await from("gateway-2", "127.0.0.2").then(
      (c) => {
        clients.push(c.client);
        return null;
      },
      (err: { code?: number }) => err,
    );
    expect(refused?.code).toBe(0x85);
    const t = uniqueTopic("alive");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    await holder.client.publishAsync(t, "still here", { qos: 1 }); // resolves once PUBACKed
    expect([holder.client.connected, seen.disconnect]).toEqual([true, undefined]);
    const same = await from("gateway-2", "127.0.0.1");
    clients.push(same.client);
    await until(() => seen.closedAt !== undefined);
    expect(seen.disconnect?.reasonCode).toBe(0x8e);
  });
});
