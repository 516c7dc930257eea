import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleProgress, freePort, PostgresServer, RedisServer } from "@evb/devstack";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { TestSystem } from "../support/system.ts";
import { TestCa } from "../support/test-certs.ts";

// Crash survived: none. A gateway and an indexer on a private Postgres with ssl=on and a private
// Redis with a TLS port (certificates made with openssl), in temp folders on free ports: publishes
// and reads work over verified TLS, and a CA that does not match stops the start.
describe("Postgres and Redis over TLS", () => {
  const ca = new TestCa("evb-storage-ca");
  const other = new TestCa("not-the-storage-ca");
  // Each server in a folder of its own below ours (PostgresServer opens its parent folder for the postgres user).
  const root = mkdtempSync(join(tmpdir(), "evb-storage-tls-"));
  let postgres: PostgresServer;
  let redis: RedisServer;
  let env: Record<string, string>;
  let sys: TestSystem;

  beforeAll(async () => {
    const server = ca.leaf("storage");
    const pgDir = join(root, "pg");
    mkdirSync(pgDir);
    copyFileSync(server.cert, join(pgDir, "server.pem"));
    copyFileSync(server.key, join(pgDir, "server.key"));
    // Postgres refuses a key others may read; the files in its folder become its user's at start.
    chmodSync(join(pgDir, "server.key"), 0o600);
    const pgPort = await freePort();
    postgres = new PostgresServer(pgDir, pgPort, consoleProgress, false, undefined, [
      "-c",
      "ssl=on",
      "-c",
      `ssl_cert_file=${join(pgDir, "server.pem")}`,
      "-c",
      `ssl_key_file=${join(pgDir, "server.key")}`,
    ]);
    const redisTlsPort = await freePort();
    redis = new RedisServer(join(root, "redis"), await freePort(), consoleProgress, false, undefined, [
      "--tls-port",
      String(redisTlsPort),
      "--tls-cert-file",
      server.cert,
      "--tls-key-file",
      server.key,
      "--tls-ca-cert-file",
      ca.ca.cert,
      "--tls-auth-clients",
      "no",
    ]);
    await Promise.all([postgres.start(), redis.start()]);
    env = {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${pgPort}/postgres`,
      DATABASE_SSL_CA_FILE: ca.ca.cert,
      REDIS_URL: `rediss://127.0.0.1:${redisTlsPort}`,
      REDIS_TLS_CA_FILE: ca.ca.cert,
    };
    sys = await TestSystem.start({ env });
  });
  afterAll(async () => {
    await sys?.stop();
    await Promise.all([postgres?.stop(), redis?.stop()]);
    rmSync(root, { recursive: true, force: true });
    ca.remove();
    other.remove();
  });

  it("publish and getEvent work with the ledger and the receipts over TLS", async () => {
    const T = uniqueTopic("storage-tls");
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: T }), "L");
    const r = await rest(sys.gatewayUrl, "L", "publish", { topic: T, content: "over tls" });
    expect(r.json, r.text).toMatchObject({ status: "SUCCESS" });
    const eventId = (r.json as { eventId: string }).eventId;
    expect(expectSuccess(await rest(sys.gatewayUrl, "L", "getEvent", { eventId }), "L")).toMatchObject({ eventId, topic: T });
    // The gateway's keys really are in the TLS server (not in the shared Redis).
    const check = new Redis(env.REDIS_URL as string, { tls: { ca: ca.ca.pem }, lazyConnect: true, maxRetriesPerRequest: 1 });
    await check.connect();
    expect((await check.scan("0", "MATCH", `${sys.env.REDIS_PREFIX}:*`, "COUNT", 1000))[1].length).toBeGreaterThan(0);
    check.disconnect();
  });

  it("a Redis CA that does not match, and plain text to its TLS port, each stop the start with one line", async () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      [
        "gateway-bad-redis-ca",
        { REDIS_TLS_CA_FILE: other.ca.cert },
        /failed to start: Redis at rediss:\/\/127\.0\.0\.1:\d+ sent a certificate this client does not accept \([A-Z_]+: .*set REDIS_TLS_CA_FILE/,
      ],
      [
        "gateway-plain-redis",
        { REDIS_URL: (env.REDIS_URL as string).replace("rediss:", "redis:"), REDIS_TLS_CA_FILE: "" },
        /failed to start: Redis at redis:\/\/127\.0\.0\.1:\d+ closed the connection before it answered: if that port serves TLS \(tls-port\), use rediss:\/\//,
      ],
    ];
    for (const [name, extra, message] of cases) {
      const err = await sys.addGateway(name, extra).then(
        () => new Error("started"),
        (e: Error) => e,
      );
      expect(err.message, name).toMatch(message);
    }
  });

  it("a Postgres CA that does not match stops the start, naming Postgres and the certificate", async () => {
    const err = await sys.addGateway("gateway-bad-pg-ca", { DATABASE_SSL_CA_FILE: other.ca.cert }).then(
      () => new Error("started"),
      (e: Error) => e,
    );
    expect(err.message).toMatch(
      /failed to start: Postgres at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres .*could not be prepared: .*certificate/,
    );
  });
});
