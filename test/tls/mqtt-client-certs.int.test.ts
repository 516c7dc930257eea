import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@evb/devstack";
import { type ApiRole, ApiKeyStore, poolOptions } from "@evb/storage";
import { uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { type CertFiles, TestCa } from "../support/test-certs.ts";
import { httpsGet, mqttTls } from "./tls-support.ts";
import { createKey } from "../support/api-keys.ts";

// Crash survived: none. Mutual TLS on MQTT_TLS_PORT with API keys on (docs/security.md, "Client
// certificates for MQTT"): a certificate whose CN is a key's id signs in as that key, with its roles.
describe("MQTT client certificates mapped to API keys", () => {
  let ca: TestCa;
  let foreign: TestCa;
  let sys: TestSystem;
  let pool: pg.Pool;
  let port: number;
  const ids: Record<string, string> = {};
  const T = uniqueTopic("mtls");

  const makeKey = async (name: string, roles: ApiRole[]) => {
    const k = await createKey(new ApiKeyStore(pool), { name, roles, groups: ["1"], publishRate: null, publishBurst: null });
    ids[name] = k.id;
    return k;
  };
  const asClient = (c: CertFiles, clientId: string) => mqttTls(port, { ca: ca.ca.pem, cert: c.pem, key: readFileSync(c.key), clientId });

  beforeAll(async () => {
    ca = new TestCa("evb-client-ca");
    foreign = new TestCa("someone-else");
    const server = ca.leaf("gateway");
    port = await freePort();
    sys = await TestSystem.start({
      env: { API_KEYS: "true" },
      gatewayEnv: { TLS_CERT_FILE: server.cert, TLS_KEY_FILE: server.key, TLS_CA_FILE: ca.ca.cert, MQTT_TLS_PORT: String(port) },
    });
    pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 2));
    const admin = await makeKey("admin", ["admin"]);
    const opened = await httpsGet(sys.gatewayUrl, "/event-broker/rest/open", { topic: T }, ca.ca.pem, `Bearer ${admin.key}`);
    expect(opened.json).toMatchObject({ code: 0 });
    await makeKey("publisher", ["publish"]);
  });
  afterAll(async () => {
    await pool?.end();
    await sys?.stop();
    ca?.remove();
    foreign?.remove();
  });

  it("a certificate whose CN is a key's id signs in without credentials, and the key's roles apply", async () => {
    const c = await asClient(ca.leaf(ids.publisher as string, { server: false }), "mtls-pub");
    try {
      await c.publishAsync(T, "signed by certificate", { qos: 1 });
      // The publisher key has no subscribe role: the filter is refused (SUBACK 0x80).
      await expect(c.subscribeAsync(T, { qos: 1 })).rejects.toThrow(/Subscribe error/);
    } finally {
      await c.endAsync(true);
    }
  });

  it("without a certificate, CONNECT's credentials are still needed", async () => {
    await expect(mqttTls(port, { ca: ca.ca.pem, clientId: "mtls-none" })).rejects.toThrow(/[Nn]ot authorized/);
  });

  it("a certificate from another CA, one whose CN is no key id, and one of a revoked key are cut", async () => {
    const cases = [foreign.leaf(ids.publisher as string, { server: false }), ca.leaf("alice", { server: false })];
    const revoked = await makeKey("revoked", ["publish"]);
    await new ApiKeyStore(pool).revoke(revoked.id, Date.now());
    cases.push(ca.leaf(revoked.id, { server: false }));
    for (const cert of cases) await expect(asClient(cert, "mtls-bad")).rejects.toThrow();
    // The server is unharmed: the good certificate still signs in.
    const ok = await asClient(ca.leaf(ids.publisher as string, { server: false }), "mtls-again");
    await ok.endAsync(true);
    expect(sys.exitedProcesses()).toEqual([]);
  });
});

describe("a certificate or key that cannot serve stops the gateway at start", () => {
  it("names the file and the fix in one line", async () => {
    const ca = new TestCa();
    try {
      const a = ca.leaf("a");
      const b = ca.leaf("b");
      const sys = await TestSystem.start({ gateways: 0 });
      try {
        await expect(sys.addGateway("gateway-bad", { TLS_CERT_FILE: a.cert, TLS_KEY_FILE: b.key })).rejects.toThrow(
          /gateway: failed to start: TLS_KEY_FILE \(.*\) is not the key of TLS_CERT_FILE \(.*\); use the key the certificate was made for/,
        );
      } finally {
        await sys.stop();
      }
    } finally {
      ca.remove();
    }
  });
});
