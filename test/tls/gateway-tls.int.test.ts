import { copyFileSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import type { MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@evb/devstack";
import { uniqueTopic } from "../support/broker-expect.ts";
import { frame, hdr, RawStomp } from "../support/stomp.ts";
import { TestSystem } from "../support/system.ts";
import { type CertFiles, TestCa } from "../support/test-certs.ts";
import { closedAfter, httpsGet, mqttTls, servedCertificate, untilServed } from "./tls-support.ts";

/** An MQTT 3.1.1 CONNECT as plain bytes: what a client that forgot TLS sends first. */
const PLAIN_CONNECT = Buffer.from([0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 2, 0, 0, 0, 0]);

// Crash survived: none. The gateway's listeners over TLS (docs/security.md): HTTPS, wss STOMP,
// MQTT over TLS, hostile clients on the TLS ports, and a certificate rotated without a restart.
describe("TLS on the gateway's listeners", () => {
  let ca: TestCa;
  let sys: TestSystem;
  let base: string;
  let httpsPort: number;
  let mqttPort: number;
  let live: { cert: string; key: string };
  const clients: MqttClient[] = [];
  const T = uniqueTopic("tls");

  /** Puts `next` in place of the live files by rename, as a rotation should (each file whole at once). */
  const rotate = (next: CertFiles) => {
    copyFileSync(next.key, `${live.key}.new`);
    copyFileSync(next.cert, `${live.cert}.new`);
    renameSync(`${live.key}.new`, live.key);
    renameSync(`${live.cert}.new`, live.cert);
  };

  beforeAll(async () => {
    ca = new TestCa();
    const first = ca.leaf("gateway-1");
    live = { cert: join(ca.dir, "live.pem"), key: join(ca.dir, "live.key") };
    copyFileSync(first.cert, live.cert);
    copyFileSync(first.key, live.key);
    mqttPort = await freePort();
    sys = await TestSystem.start({
      gatewayEnv: {
        TLS_CERT_FILE: live.cert,
        TLS_KEY_FILE: live.key,
        MQTT_TLS_PORT: String(mqttPort),
        TLS_HANDSHAKE_TIMEOUT_MS: "1000",
        HTTP_HEADERS_TIMEOUT_MS: "1000",
        TLS_RELOAD_POLL_MS: "200",
        STOMP_POLL_MS: "500",
      },
    });
    base = sys.gatewayUrl;
    httpsPort = Number(new URL(base).port);
    expect(base).toMatch(/^https:/);
    const opened = await httpsGet(base, "/event-broker/rest/open", { topic: T }, ca.ca.pem);
    expect(opened.json).toMatchObject({ code: 0 });
  });
  afterAll(async () => {
    for (const c of clients) await c.endAsync(true).catch(() => {});
    await sys?.stop();
    ca?.remove();
  });

  it("HTTPS: publish and getEvent", async () => {
    const pub = await httpsGet(base, "/event-broker/rest/publish", { topic: T, content: "over https" }, ca.ca.pem);
    // publish answers a bare SendResult in every variant.
    expect(pub.json).toMatchObject({ status: "SUCCESS", topic: T });
    const eventId = (pub.json as { eventId: string }).eventId;
    const got = await httpsGet(base, "/event-broker/rest/getEvent", { eventId }, ca.ca.pem);
    expect(got.json).toMatchObject({ code: 0, data: { topic: T, eventId } });
  });

  it("wss: STOMP SEND and SUBSCRIBE over TLS", async () => {
    const r = await RawStomp.open(`${base.replace(/^https/, "wss")}/event-broker/stomp`, { ca: ca.ca.pem });
    try {
      expect((await r.connect()).command).toBe("CONNECTED");
      r.send(frame("SUBSCRIBE", { destination: T, id: "1", eventId: "OFFSET_LAST", receipt: "s" }));
      await r.until((f) => f.some((x) => x.command === "RECEIPT"));
      r.send(frame("SEND", { destination: T, receipt: "7" }, "over wss"));
      const msgs = await r.until((f) => f.some((x) => x.command === "MESSAGE"));
      const msg = msgs.find((x) => x.command === "MESSAGE");
      expect(msg?.body).toBe("over wss");
      expect(hdr(msg as never, "destination")).toBe(T);
    } finally {
      r.close();
    }
  });

  it("MQTT over TLS: publish and subscribe with mqtt.js", async () => {
    const c = await mqttTls(mqttPort, { ca: ca.ca.pem, clientId: "tls-sub" });
    clients.push(c);
    await c.subscribeAsync(T, { qos: 1 });
    const got = new Promise<string>((r) => c.once("message", (_t, payload) => r(payload.toString())));
    await c.publishAsync(T, "over mqtts", { qos: 1 });
    expect(await got).toBe("over mqtts");
  });

  it("a plain-text client on a TLS port is refused and the server keeps serving", async () => {
    await closedAfter(mqttPort, PLAIN_CONNECT, 10_000);
    await closedAfter(httpsPort, Buffer.from("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"), 10_000);
    expect(await servedCertificate(mqttPort, ca.ca.pem)).toBe("gateway-1");
    expect((await httpsGet(base, "/health", {}, ca.ca.pem)).status).toBe(200);
  });

  it("a handshake that never finishes is cut after TLS_HANDSHAKE_TIMEOUT_MS (1 s here), on both ports", async () => {
    // Without it Node waits two minutes and the MQTT CONNECT timeout (10 s) only starts after the handshake.
    for (const port of [mqttPort, httpsPort]) {
      const after = await closedAfter(port, null, 8_000);
      expect(after).toBeGreaterThanOrEqual(900);
    }
    // Half a ClientHello (a record header announcing more than comes) is cut the same way.
    expect(await closedAfter(mqttPort, Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]), 8_000)).toBeGreaterThanOrEqual(900);
  });

  it("inside TLS the HTTP server's own answers hold: a head that stalls gets 408, malformed HTTP 400, both as JSON", async () => {
    const answer = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        const s = tlsConnect({ port: httpsPort, host: "127.0.0.1", ca: ca.ca.pem }, () => s.write(bytes));
        s.on("data", (b: Buffer) => chunks.push(b));
        s.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
        s.on("error", reject);
      });
    const stalled = await answer("GET /health HTTP/1.1\r\nHost: x\r\n");
    expect(stalled).toMatch(/^HTTP\/1\.1 408 /);
    expect(stalled).toContain("HTTP_HEADERS_TIMEOUT_MS");
    const malformed = await answer("GET /health HTTP/1.1\r\nHost x\r\n\r\n");
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(malformed).toContain("malformed HTTP request");
  });

  /** A message published on `c` comes back to it (it subscribed to T): the connection still works. */
  const roundTrip = async (c: MqttClient, text: string) => {
    const got = new Promise<string>((r) => c.once("message", (_t, payload) => r(payload.toString())));
    await c.publishAsync(T, text, { qos: 1 });
    expect(await got).toBe(text);
  };

  it("a certificate renamed into place reaches new connections on both ports; an open connection stays up", async () => {
    const old = await mqttTls(mqttPort, { ca: ca.ca.pem, clientId: "tls-old" });
    clients.push(old);
    await old.subscribeAsync(T, { qos: 1 });
    rotate(ca.leaf("gateway-2"));
    await untilServed(mqttPort, ca.ca.pem, "gateway-2");
    await untilServed(httpsPort, ca.ca.pem, "gateway-2");
    await roundTrip(old, "still up after a file change");
    expect((old.stream as unknown as TLSSocket).getPeerCertificate().subject.CN).toBe("gateway-1");
  });

  it("SIGHUP reloads (the file poll is off here); an expired certificate is refused by a verifying client; the open connection stays up", async () => {
    const dir = join(ca.dir, "hup");
    mkdirSync(dir);
    const files = { cert: join(dir, "live.pem"), key: join(dir, "live.key") };
    const start = ca.leaf("hup-1");
    copyFileSync(start.cert, files.cert);
    copyFileSync(start.key, files.key);
    const port = await freePort();
    const url = await sys.addGateway("gateway-hup", {
      TLS_CERT_FILE: files.cert,
      TLS_KEY_FILE: files.key,
      MQTT_TLS_PORT: String(port),
      TLS_RELOAD_POLL_MS: "600000",
    });
    const old = await mqttTls(port, { ca: ca.ca.pem, clientId: "hup-old" });
    clients.push(old);
    await old.subscribeAsync(T, { qos: 1 });

    const expired = ca.leaf("hup-expired", { days: -1 });
    copyFileSync(expired.cert, files.cert);
    copyFileSync(expired.key, files.key);
    sys.signal("gateway-hup", "SIGHUP");
    await untilServed(port, ca.ca.pem, "error:CERT_HAS_EXPIRED");
    expect(await servedCertificate(Number(new URL(url).port), ca.ca.pem)).toBe("error:CERT_HAS_EXPIRED");
    await expect(mqttTls(port, { ca: ca.ca.pem, clientId: "hup-refused" })).rejects.toThrow(/expired/);
    await roundTrip(old, "still up after SIGHUP");

    const fresh = ca.leaf("hup-2");
    copyFileSync(fresh.cert, files.cert);
    copyFileSync(fresh.key, files.key);
    sys.signal("gateway-hup", "SIGHUP");
    await untilServed(port, ca.ca.pem, "hup-2");
    expect(sys.exitedProcesses()).toEqual([]);
  });
});
