import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort, startServiceProcess } from "@evb/devstack";
import { ApiKeyStore, newApiKey, poolOptions } from "@evb/storage";
import { callFrom } from "./support/http-from.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";

const LOG_DIR = join(import.meta.dirname, "..", ".cache", "test-logs");
const M = "/event-m";
const tag = (s: string) => `${s}${randomBytes(9).toString("hex")}`;

// Crash survived: a gateway that cannot reach its database at start (exits with an error).
// Secrets never appear in logs or error messages: a stack run with API keys, Basic users, webhook
// signing secrets and a database password, at debug level, exercising right and wrong
// credentials, signed callbacks and a failed start; then every log line of it is searched.
describe("secrets never in logs", () => {
  const dbPassword = tag("dbpw");
  const basicPassword = tag("basicpw");
  const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
  const wrongKey = `evbk_${randomBytes(6).toString("hex")}_${randomBytes(32).toString("base64url")}`;
  let apiKey = "";
  let sys: TestSystem;
  let rx: Receiver;

  beforeAll(async () => {
    const db = new URL(inject("databaseUrl"));
    db.password = dbPassword; // the test Postgres trusts local connections, so any password is taken
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        DATABASE_URL: db.toString(),
        LOG_LEVEL: "debug",
        API_KEYS: "true",
        API_BASIC_AUTH: `ops:${basicPassword}`,
        WEBHOOK_SECRETS: webhookSecret,
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        NOTIFIER_POLL_MS: "200",
      },
    });
    const pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 1));
    const k = newApiKey();
    await new ApiKeyStore(pool).create({
      id: k.id,
      name: "secret-test",
      secretSha256: k.secretSha256,
      roles: ["admin"],
      groups: ["*"],
      publishRate: null,
      publishBurst: null,
      now: Date.now(),
    });
    await pool.end();
    apiKey = k.key;
    rx = await Receiver.start();
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("no log line of any service holds an API key, Basic password, webhook secret or database password", async () => {
    const bearer = { authorization: `Bearer ${apiKey}` };
    const basic = (pw: string) => ({ authorization: `Basic ${Buffer.from(`ops:${pw}`).toString("base64")}` });
    const call = (path: string, params: Record<string, string>, headers: Record<string, string>) =>
      callFrom("127.0.0.1", sys.gatewayUrl, path, params, headers);

    expect((await call(`${M}/rest/open`, { topic: "secret" }, bearer)).json).toBe(true);
    const id = (await call(`${M}/rest/subscribe`, { topic: "secret", url: rx.url() }, basic(basicPassword))).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const sent = await call(`${M}/rest/publish`, { topic: "secret", content: "x" }, bearer);
    expect((sent.json as { status: string }).status).toBe("SUCCESS");
    await rx.until(() => rx.deliveredIds(id).length === 1, "the signed callback");
    expect(rx.requests[0]?.headers["webhook-signature"]).toMatch(/^v1,/);
    // A signing secret of the subscription's own: answered once, used to sign, never logged.
    const rotated = await call(`${M}/admin/subscriptionSettings`, { subscriptionId: id, rotateSecret: "true" }, basic(basicPassword));
    const ownSecret = (rotated.json as { data: { secret: string } }).data.secret;
    expect(ownSecret).toMatch(/^whsec_/);
    expect((await call(`${M}/rest/publish`, { topic: "secret", content: "y" }, bearer)).status).toBe(200);
    await rx.until(() => rx.deliveredIds(id).length === 2, "the callback signed with its own secret");
    // Refused credentials, and failures that log.
    expect((await call(`${M}/rest/publish`, { topic: "secret", content: "x" }, { authorization: `Bearer ${wrongKey}` })).status).toBe(401);
    expect((await call(`${M}/rest/state`, { topic: "secret" }, basic(`${basicPassword}x`))).status).toBe(401);
    expect((await call(`${M}/rest/subscribe`, { topic: "secret", url: "http://127.0.0.1:1/closed" }, bearer)).json).toMatchObject({
      code: 100502,
    });
    expect((await call(`${M}/rest/unSubscribe`, { subscriptionId: id }, basic(basicPassword))).text).toBe("true");

    // A gateway whose database does not answer stops with an error naming the database.
    const port = await freePort();
    const closed = new URL(sys.env.DATABASE_URL as string);
    closed.port = String(await freePort());
    await expect(
      startServiceProcess({
        name: "gateway-nodb",
        service: "gateway",
        env: { ...sys.env, DATABASE_URL: closed.toString(), DATABASE_QUERY_TIMEOUT_MS: "1000", HOST: "127.0.0.1", PORT: String(port) },
        healthUrl: `http://127.0.0.1:${port}/health`,
        output: { file: join(LOG_DIR, `${sys.env.REDIS_PREFIX}-gateway-nodb.log`) },
        timeoutMs: 30_000,
      }),
    ).rejects.toThrow(/could not be prepared/);
    // Defect 7: the password given as a query parameter (libpq's form) is hidden too.
    const queryPw = new URL(closed);
    queryPw.password = "";
    queryPw.searchParams.set("password", dbPassword);
    const port2 = await freePort();
    await expect(
      startServiceProcess({
        name: "gateway-nodb-query",
        service: "gateway",
        env: { ...sys.env, DATABASE_URL: queryPw.toString(), DATABASE_QUERY_TIMEOUT_MS: "1000", HOST: "127.0.0.1", PORT: String(port2) },
        healthUrl: `http://127.0.0.1:${port2}/health`,
        output: { file: join(LOG_DIR, `${sys.env.REDIS_PREFIX}-gateway-nodb-query.log`) },
        timeoutMs: 30_000,
      }),
    ).rejects.toThrow(/could not be prepared/);

    await sys.stop();
    const files = readdirSync(LOG_DIR).filter((f) => f.startsWith(`${sys.env.REDIS_PREFIX}-`));
    expect(files.length).toBeGreaterThanOrEqual(4);
    const logs = files.map((f) => [f, readFileSync(join(LOG_DIR, f), "utf8")] as const);
    // The logs are not empty: debug lines of every service, the failed start's reason.
    expect(logs.find(([f]) => f.endsWith("gateway-nodb.log"))?.[1]).toMatch(/could not be prepared/);
    expect(logs.find(([f]) => f.endsWith("gateway-nodb-query.log"))?.[1]).toMatch(/password=\*\*\*.*could not be prepared/);
    const secrets = {
      apiKey,
      apiKeySecret: apiKey.slice(18),
      wrongKey,
      basicPassword,
      webhookSecret,
      webhookKey: webhookSecret.slice(6),
      dbPassword,
      ownSecret,
      ownKey: ownSecret.slice(6),
    };
    for (const [file, text] of logs) {
      for (const [what, secret] of Object.entries(secrets)) expect(text.includes(secret), `${what} in ${file}`).toBe(false);
    }
  });
});
