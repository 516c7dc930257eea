import { type ChildProcess, execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { mqttEnv, mqttWsUrl, openClient } from "./raw-mqtt.ts";

const run = promisify(execFile);
const BASIC = `Basic ${Buffer.from("ops:s3cret").toString("base64")}`;

/** mosquitto_sub's output lines (`-v`: "topic payload") until it has `n` or exits. */
function subscriber(args: string[]): { child: ChildProcess; lines: string[]; exited: Promise<number | null> } {
  const child = spawn("mosquitto_sub", args, { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let rest = "";
  child.stdout?.on("data", (b: Buffer) => {
    const parts = (rest + b.toString("utf8")).split("\n");
    rest = parts.pop() ?? "";
    lines.push(...parts);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, lines, exited };
}

// Crash survived: none (Debian's mosquitto-clients against MQTT_PORT, with credentials configured).
describe("MQTT with mosquitto_pub / mosquitto_sub, credentials on (API_BASIC_AUTH)", () => {
  let sys: TestSystem;
  let port: string;
  const clients: MqttClient[] = [];
  const children: ChildProcess[] = [];
  const base = uniqueTopic("mosq");

  beforeAll(async () => {
    const env = await mqttEnv({ API_BASIC_AUTH: "ops:s3cret" });
    port = env.MQTT_PORT as string;
    sys = await TestSystem.start({ gatewayEnv: env });
    for (const t of [`${base}/a`, `${base}/b`]) {
      const opened = await fetch(`${sys.gatewayUrl}/event-broker/rest/open?topic=${t}`, { headers: { authorization: BASIC } });
      expect(await opened.json()).toMatchObject({ code: 0 });
    }
  });
  afterAll(async () => {
    for (const c of children) c.kill();
    for (const c of clients) await c.endAsync(true).catch(() => {});
    await sys?.stop();
  });

  const auth = ["-h", "127.0.0.1", "-u", "ops", "-P", "s3cret"];

  it("mosquitto_sub (3.1.1 and 5) receives what mosquitto_pub publishes at QoS 1, raw, on the real topics, in order", async () => {
    const v4 = subscriber([...auth, "-p", port, "-t", `${base}/#`, "-q", "1", "-v", "-C", "3"]);
    const v5 = subscriber([...auth, "-p", port, "-V", "mqttv5", "-t", `${base}/+`, "-q", "1", "-v", "-C", "3"]);
    children.push(v4.child, v5.child);
    // Subscribed once the listing shows both (the SUBACK is not printed).
    const node = new URL(sys.gatewayUrl).host;
    await expect
      .poll(
        async () => {
          const r = await fetch(`${sys.gatewayUrl}/event-broker/admin/listSubscription?nodeInstances=${node}`, {
            headers: { authorization: BASIC },
          });
          const body = (await r.json()) as { data: Record<string, { interfaceType: string }[]> };
          return (body.data[node] ?? []).filter((s) => s.interfaceType === "mqtt").length;
        },
        { timeout: 10_000 },
      )
      .toBe(2);
    for (const [t, m] of [
      [`${base}/a`, "hello 1"],
      [`${base}/b`, "hello 2"],
      [`${base}/a`, "hello 3"],
    ]) {
      await run("mosquitto_pub", [...auth, "-p", port, "-t", t as string, "-m", m as string, "-q", "1"]);
    }
    expect(await v4.exited).toBe(0);
    expect(await v5.exited).toBe(0);
    const expected = [`${base}/a hello 1`, `${base}/b hello 2`, `${base}/a hello 3`];
    expect(v4.lines).toEqual(expected);
    expect(v5.lines).toEqual(expected);
  });

  it("mosquitto_pub with a wrong password is refused; QoS 1 to a missing topic fails", async () => {
    const wrong = run("mosquitto_pub", ["-h", "127.0.0.1", "-p", port, "-u", "ops", "-P", "nope", "-t", `${base}/a`, "-m", "x", "-q", "1"]);
    await expect(wrong).rejects.toMatchObject({ stderr: expect.stringMatching(/not authori[sz]ed|bad user name or password/i) });
    const missing = run("mosquitto_pub", [...auth, "-p", port, "-V", "mqttv5", "-t", uniqueTopic("missing"), "-m", "x", "-q", "1"]);
    const out = await missing.then(
      (r) => r.stdout + r.stderr,
      (err: { stdout: string; stderr: string }) => err.stdout + err.stderr,
    );
    expect(out).toMatch(/topic name invalid/i);
  });

  it("mqtt.js: CONNACK 4 / 0x86 for a wrong password, 5 / 0x87 for none; a WebSocket handshake's Authorization logs in", async () => {
    const url = `mqtt://127.0.0.1:${port}`;
    await expect(openClient(url, { username: "ops", password: "nope" })).rejects.toMatchObject({ code: 4 });
    await expect(openClient(url, { protocolVersion: 5 })).rejects.toMatchObject({ code: 0x87 });
    await expect(openClient(url, { protocolVersion: 5, username: "ops", password: "nope" })).rejects.toMatchObject({ code: 0x86 });
    const ws = await openClient(mqttWsUrl(sys.gatewayUrl), { wsOptions: { headers: { authorization: BASIC } } });
    clients.push(ws.client);
    await ws.client.publishAsync(`${base}/a`, "by header", { qos: 1 });
    await expect(
      openClient(mqttWsUrl(sys.gatewayUrl), { wsOptions: { headers: { authorization: "Basic b3BzOndyb25n" } } }),
    ).rejects.toThrow();
  });
});
