import { Redis } from "ioredis";
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { expectJson200, expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { mqttWsUrl, openClient } from "./raw-mqtt.ts";

// Crash survived: Redis losing the persistent MQTT sessions (its keys deleted, as a flush or a
// Redis restarted without persistence would), also after a SIGKILL of the gateway.
describe("MQTT persistent sessions survive a Redis that lost them", () => {
  let sys: TestSystem;
  let redis: Redis;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    sys = await TestSystem.start({ gatewayEnv: { STOMP_POLL_MS: "500" } });
    redis = new Redis(inject("redisUrl"), { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => {});
    redis?.disconnect();
    await sys?.stop();
  });

  const session = async (clientId: string) => {
    const c = await openClient(mqttWsUrl(sys.gatewayUrl), {
      clientId,
      clean: false,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
    });
    clients.push(c.client);
    return c;
  };
  const publish = async (topic: string, content: string) => {
    const sent = expectJson200(await rest(sys.gatewayUrl, "L", "publish", { topic, content }, "POST")) as { status: string };
    expect(sent.status, content).toBe("SUCCESS");
  };
  const bodies = (messages: { payload: Buffer }[]) => messages.map((m) => m.payload.toString());
  /** Deletes this system's MQTT session keys only (other runs share this Redis): what a flush would do to them. */
  const loseSessions = async () => {
    let cursor = "0";
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${sys.env.REDIS_PREFIX}:mqtt:session:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== "0");
    return deleted;
  };

  it("a client away while Redis lost its session resumes it: every event published meanwhile arrives, in order", async () => {
    const t = uniqueTopic("redis-lost");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const id = uniqueTopic("away");
    const first = await session(id);
    await first.client.subscribeAsync(t, { qos: 1 });
    await publish(t, "e0");
    expect(bodies(await first.log.count(1))).toEqual(["e0"]);
    await first.client.endAsync();
    const away = ["e1", "e2", "e3", "e4", "e5"];
    for (const content of away) await publish(t, content);
    expect(await loseSessions()).toBeGreaterThanOrEqual(1);
    const second = await session(id);
    expect(second.log.connack?.sessionPresent).toBe(true);
    expect(bodies(await second.log.count(away.length))).toEqual(away);
    await new Promise((r) => setTimeout(r, 500));
    expect(bodies(second.log.messages)).toEqual(away);
  });

  it("after a SIGKILL of its gateway and Redis losing the session, it resumes from the Postgres copy: at least once, never a gap", async () => {
    const t = uniqueTopic("killed-and-lost");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: t }), "L");
    const id = uniqueTopic("survivor");
    const first = await session(id);
    await first.client.subscribeAsync(t, { qos: 1 });
    const before = ["k0", "k1", "k2"];
    for (const content of before) await publish(t, content);
    expect(bodies(await first.log.count(before.length))).toEqual(before);
    await sys.kill("gateway-1");
    expect(await loseSessions()).toBeGreaterThanOrEqual(0);
    await sys.restart("gateway-1");
    const away = ["k3", "k4"];
    for (const content of away) await publish(t, content);
    expect(await loseSessions()).toBeGreaterThanOrEqual(0);
    const second = await session(id);
    expect(second.log.connack?.sessionPresent).toBe(true);
    await second.log.count(away.length);
    await new Promise((r) => setTimeout(r, 500));
    const all = [...before, ...away];
    const resumed = bodies(second.log.messages);
    // Positions in Postgres may be up to 10 s old: some of k0..k2 may come again, none is skipped.
    expect(resumed).toEqual(all.slice(all.indexOf(resumed[0] as string)));
    expect(resumed.slice(-away.length)).toEqual(away);
  });
});
