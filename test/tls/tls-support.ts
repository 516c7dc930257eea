import { request } from "node:https";
import { connect as netConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { type IClientOptions, connect as mqttConnect, type MqttClient } from "mqtt";

/** One GET over HTTPS trusting `ca` only: status and parsed JSON body. */
export function httpsGet(
  base: string,
  path: string,
  params: Record<string, string>,
  ca: string,
  authorization?: string,
): Promise<{ status: number; json: unknown }> {
  const url = `${base}${path}?${new URLSearchParams(params).toString()}`;
  const headers = authorization === undefined ? {} : { authorization };
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("no HTTPS answer within 30 s")));
    req.on("error", reject);
    req.end();
  });
}

/** The CN a new TLS connection to `port` is served, or the verification error's code when `ca` does not accept it. */
export function servedCertificate(port: number, ca: string, o: { cert?: string; key?: string } = {}): Promise<string> {
  return new Promise((resolve) => {
    const s = tlsConnect({ port, host: "127.0.0.1", ca, ...o }, () => {
      resolve(String(s.getPeerCertificate().subject.CN));
      s.destroy();
    });
    s.on("error", (err: NodeJS.ErrnoException) => resolve(`error:${err.code ?? err.message}`));
  });
}

/** Waits (on new handshakes, bounded) until `port` serves the certificate named `cn`. */
export async function untilServed(port: number, ca: string, cn: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  let last = "";
  while (Date.now() < deadline) {
    last = await servedCertificate(port, ca, {});
    if (last === cn) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`port ${port} never served ${cn}; last: ${last}`);
}

/**
 * A plain TCP connection that writes `bytes` (nothing: a handshake that never starts) and
 * resolves with how long the server took to close it, or rejects after `ms`.
 */
export function closedAfter(port: number, bytes: Buffer | null, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const s = netConnect(port, "127.0.0.1", () => {
      if (bytes) s.write(bytes);
    });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`the server kept the connection open for ${ms} ms`));
    }, ms);
    s.on("error", () => {});
    s.on("data", () => {});
    s.on("close", () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

/** An mqtt.js client over TLS, connected (or rejected with the error or refusal it met). */
export function mqttTls(port: number, opts: IClientOptions): Promise<MqttClient> {
  const client = mqttConnect(`mqtts://127.0.0.1:${port}`, { reconnectPeriod: 0, connectTimeout: 10_000, ...opts });
  return new Promise((resolve, reject) => {
    client.once("connect", () => resolve(client));
    client.once("error", (err) => {
      client.end(true);
      reject(err);
    });
    client.once("close", () => reject(new Error("closed before CONNACK")));
  });
}
