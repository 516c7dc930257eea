import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Child, freePort, startServiceProcess } from "@evb/devstack";
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openClient } from "../mqtt/raw-mqtt.ts";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { waitUntil } from "../support/publish-stream.ts";
import { Inbox, stompClient, stompUrl } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";
import { ROOT } from "./compose-fixture.ts";
import { type LocalBalancer, localHaproxyConfig, serverStates } from "./haproxy-local.ts";

// Crash survived: a stopped gateway behind the balancer. The compose balancer's own configuration
// (deploy/haproxy/haproxy.cfg, only its addresses moved to loopback) in front of two real gateways
// that listen on the same ports at their own loopback addresses, as the compose gateways do on
// their own hosts. Debian's haproxy reads the file as the image's 3.x does.
const haproxyBinary = spawnSync("haproxy", ["-v"]).status === 0;

describe.skipIf(!haproxyBinary)("the compose load balancer in front of two gateways (skipped without a haproxy binary)", () => {
  let sys: TestSystem;
  let lb: Child;
  let b: LocalBalancer;
  let dir = "";
  const gateways = new Map<string, Child>();
  const mqttClients: MqttClient[] = [];
  const T = uniqueTopic("lb");
  const lbUrl = () => `http://127.0.0.1:${b.http}`;
  const states = () => serverStates(b.stats);
  const publish = async (content: string) => {
    const r = await rest(lbUrl(), "L", "publish", { topic: T, content }, "POST");
    expect((r.json as { status?: string } | undefined)?.status, r.text).toBe("SUCCESS");
  };
  const allUp = async () => {
    if (!lb.running) throw new Error(`haproxy exited: ${lb.lastOutput()}`);
    // Not answering yet (haproxy still starting) counts as not up.
    const s = await states().catch(() => new Map<string, { status: string }>());
    return s.size === 4 && [...s.values()].every((x) => x.status === "UP");
  };

  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 0 });
    const [http, mqtt, health, stats, gatewayPort, gatewayMqttPort] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
    b = { http, mqtt, health, stats, gatewayHosts: ["127.0.0.2", "127.0.0.3"], gatewayPort, gatewayMqttPort } as LocalBalancer;
    for (const [i, host] of b.gatewayHosts.entries()) {
      const name = `gateway-${i + 1}`;
      const env = { ...sys.env, HOST: host, PORT: String(gatewayPort), MQTT_PORT: String(gatewayMqttPort), STOMP_POLL_MS: "500" };
      const output = { file: join(ROOT, ".cache", "test-logs", `${sys.env.REDIS_PREFIX}-lb-${name}.log`) };
      gateways.set(
        name,
        await startServiceProcess({ name, service: "gateway", env, healthUrl: `http://${host}:${gatewayPort}/readyz`, output }),
      );
    }
    dir = mkdtempSync(join(tmpdir(), "evb-haproxy-"));
    writeFileSync(join(dir, "haproxy.cfg"), localHaproxyConfig(ROOT, b));
    lb = new Child({
      name: "haproxy",
      command: "haproxy",
      args: ["-db", "-f", join(dir, "haproxy.cfg")],
      output: { file: join(ROOT, ".cache", "test-logs", `${sys.env.REDIS_PREFIX}-lb-haproxy.log`) },
    });
    await waitUntil("both gateways are up in both pools", allUp, 30_000);
    expectSuccess(await rest(lbUrl(), "L", "open", { topic: T }), "L");
  });
  afterAll(async () => {
    for (const c of mqttClients) await c.endAsync(true).catch(() => {});
    await lb?.stop(5_000);
    await Promise.all([...gateways.values()].map((g) => g.stop(5_000)));
    await sys?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers its own readiness while the pools have a gateway", async () => {
    expect((await fetch(`http://127.0.0.1:${b.health}/readyz`)).status).toBe(200);
  });

  it("takes HTTP publishes and a WebSocket STOMP session on the same port, spread over both gateways", async () => {
    const stomp = await stompClient(stompUrl(lbUrl()));
    try {
      const inbox = new Inbox();
      // The gateway answers a SUBSCRIBE with a RECEIPT whose receipt-id is the subscription's id.
      const subscribed = new Promise<void>((resolve) => stomp.watchForReceipt("lb-sub", () => resolve()));
      stomp.subscribe(T, inbox.take, { id: "lb-sub", eventId: "OFFSET_LAST" });
      await subscribed;
      for (let i = 0; i < 4; i++) await publish(`http-${i}`);
      const got = await inbox.count(4);
      expect(got.map((m) => m.body)).toEqual(["http-0", "http-1", "http-2", "http-3"]);
      // leastconn: the publishes go to the gateway that does not hold the WebSocket.
      const after = await states();
      expect(after.get("gateways_http/gateway-1")?.sessions).toBeGreaterThan(0);
      expect(after.get("gateways_http/gateway-2")?.sessions).toBeGreaterThan(0);
    } finally {
      await stomp.deactivate();
    }
  });

  it("passes MQTT over TCP through: a QoS 1 publish reaches a subscriber connected through the balancer", async () => {
    const { client: sub, log } = await openClient(`mqtt://127.0.0.1:${b.mqtt}`);
    mqttClients.push(sub);
    await sub.subscribeAsync(T, { qos: 1 });
    const { client: pub } = await openClient(`mqtt://127.0.0.1:${b.mqtt}`);
    mqttClients.push(pub);
    await pub.publishAsync(T, "over tcp", { qos: 1 });
    const got = await log.count(1);
    expect(got.map((m) => m.payload.toString("utf8"))).toContain("over tcp");
  });

  it("routes around a stopped gateway: every publish and MQTT connect succeeds, and the gateway leaves both pools", async () => {
    await (gateways.get("gateway-1") as Child).stop(10_000);
    // At once, before any health check has run: refused connections are redispatched.
    for (let i = 0; i < 6; i++) await publish(`after-stop-${i}`);
    const { client } = await openClient(`mqtt://127.0.0.1:${b.mqtt}`);
    mqttClients.push(client);
    await client.publishAsync(T, "after stop", { qos: 1 });
    await waitUntil("gateway-1 is DOWN in both pools", async () => {
      const s = await states();
      return s.get("gateways_http/gateway-1")?.status === "DOWN" && s.get("gateways_mqtt/gateway-1")?.status === "DOWN";
    });
    const s = await states();
    expect([s.get("gateways_http/gateway-2")?.status, s.get("gateways_mqtt/gateway-2")?.status]).toEqual(["UP", "UP"]);
    expect((await fetch(`http://127.0.0.1:${b.health}/readyz`)).status).toBe(200);
  });
});
