import { createHmac, randomBytes } from "node:crypto";
import { poolOptions } from "@evb/storage";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http.ts";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { admin, E, L, M, openTopic, publish, subscribe } from "./helpers.ts";

// Crash survived: none. Webhooks as receivers want them, on the real stack with real receivers:
// subscribe without a live receiver (verify=false) and the distinct code for a refused address.

const err = (code: number, message: string) => ({ code, message });
const NOT_ALLOWED = err(
  100515,
  "callback url is not allowed: its host resolves only to addresses the outbound policy refuses (CALLBACK_ALLOWED_CIDRS)",
);
const NO_CONNECT = err(100502, "failed to connect url");

/** Standard Webhooks verification, written from the scheme: any "v1,<base64 HMAC>" entry signed with `secret`. */
function signedWith(secret: string, r: { headers: Record<string, string | string[] | undefined>; body: string }): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key)
    .update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`)
    .digest("base64");
  return String(r.headers["webhook-signature"]).split(" ").includes(`v1,${expected}`);
}

interface TestAnswer {
  code: number;
  data: {
    subscriptionId: string;
    eventId: string;
    delivered: boolean;
    httpStatus: number | null;
    durationMs: number;
    error: string | null;
  };
}

describe("webhooks as receivers want them", () => {
  const deploymentKey = `whsec_${randomBytes(32).toString("base64")}`;
  const secretsKey = randomBytes(32).toString("hex");
  let sys: TestSystem;
  const receivers: Receiver[] = [];
  const receiver = async (port = 0) => {
    const r = await Receiver.start(port);
    receivers.push(r);
    return r;
  };
  const sub = (params: Record<string, string>, mount = M) => call(sys.gatewayUrl, `${mount}/rest/subscribe`, params);

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        ...QUICK_CALLBACKS_ENV,
        RETRY_MAX_ATTEMPTS: "50",
        RETRY_MAX_MS: "200",
        WEBHOOK_SECRETS: deploymentKey,
        SECRETS_KEY: secretsKey,
      },
    });
    await openTopic(sys.gatewayUrl, "hooks");
    await openTopic(sys.gatewayUrl, "hooks/raw");
    await openTopic(sys.gatewayUrl, "hooks/filtered");
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await sys?.stop();
  });

  it("without verify, a receiver down and a refused address are both 100502, as the original answered", async () => {
    const down = await receiver();
    const url = down.url();
    await down.close();
    for (const mount of [M, E]) {
      expect((await sub({ topic: "hooks", url }, mount)).json).toEqual(NO_CONNECT);
      expect((await sub({ topic: "hooks", url: "http://10.0.0.1:8080/cb" }, mount)).json).toEqual(NO_CONNECT);
    }
  });

  it("verify=true: 100502 for a receiver down, 100515 for a refused address; a bad verify 100516", async () => {
    const down = await receiver();
    const url = down.url();
    await down.close();
    expect((await sub({ topic: "hooks", url, verify: "true" })).json).toEqual(NO_CONNECT);
    expect((await sub({ topic: "hooks", url: "http://10.0.0.1:8080/cb", verify: "true" }, E)).json).toEqual(NOT_ALLOWED);
    expect((await sub({ topic: "hooks", url: "http://169.254.169.254/x", verify: "false" })).json).toEqual(NOT_ALLOWED);
    expect((await sub({ topic: "hooks", url, verify: "maybe" })).json).toEqual(err(100516, "verify should be true or false"));
    // The check keeps its place: a bad URL format still comes first.
    expect((await sub({ topic: "hooks", url: "nope", verify: "false" })).json).toEqual(err(100501, "invalid url format"));
  });

  it("verify=false takes a receiver that is down now, and delivers once it is up", async () => {
    const down = await receiver();
    const url = down.url();
    const port = Number(new URL(url).port);
    await down.close();
    const r = await sub({ topic: "hooks", url, verify: "false" });
    expect(r.text).toMatch(/^[0-9a-f-]{36}$/);
    const id = r.text;
    const eventId = await publish(sys.gatewayUrl, "hooks", "while down");
    const up = await receiver(port);
    await up.until(() => up.deliveredIds(id).includes(eventId), "the event published while the receiver was down");
  });

  it("admin/testDelivery sends one marked, signed test callback and answers what the receiver said", async () => {
    const rx = await receiver();
    const id = await subscribe(sys.gatewayUrl, { topic: "hooks/+", url: rx.url("/t") });
    const r = (await admin(sys.gatewayUrl, L, "testDelivery", { subscriptionId: id })) as TestAnswer;
    expect(r.code, JSON.stringify(r)).toBe(0);
    expect(r.data).toMatchObject({ subscriptionId: id, delivered: true, httpStatus: 200, error: null });
    expect(r.data.eventId).toMatch(/^test_[0-9a-f-]{36}$/);
    expect(r.data.durationMs).toBeGreaterThanOrEqual(0);
    expect(rx.requests).toHaveLength(1);
    const got = rx.requests[0] as (typeof rx.requests)[number];
    expect(got.headers["webhook-test"]).toBe("true");
    expect(got.headers["webhook-id"]).toBe(`msg_${id}_${r.data.eventId}`);
    expect(signedWith(deploymentKey, got)).toBe(true);
    const body = JSON.parse(got.body);
    expect(body).toMatchObject({ subscriptionId: id, event: { topic: "hooks/+", eventId: r.data.eventId } });
    expect(JSON.parse(Buffer.from(body.event.content, "base64").toString("utf8"))).toMatchObject({ test: true });

    // Its own secret signs it once it has one; a failing receiver's status is answered, and nothing is retried.
    const own = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, rotateSecret: "true" })) as {
      data: { secret: string };
    };
    rx.answer = () => ({ status: 503, body: "down for maintenance" });
    const failed = (await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: id })) as TestAnswer;
    expect(failed.data).toMatchObject({ delivered: false, httpStatus: 503, error: "HTTP 503" });
    expect(rx.requests).toHaveLength(2);
    expect(signedWith(own.data.secret, rx.requests[1] as (typeof rx.requests)[number])).toBe(true);
  });

  it("admin/testDelivery: blank 100503, unknown or ended 100504; a receiver down is answered, not an error", async () => {
    expect(await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: " " })).toEqual(
      err(100503, "subscribe interface subscription id is blank"),
    );
    expect(await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: "nope" })).toEqual(err(100504, "subscribe id is not exist"));
    const down = await receiver();
    const url = down.url();
    await down.close();
    const id = (await sub({ topic: "hooks", url, verify: "false" })).text;
    const r = (await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: id })) as TestAnswer;
    expect(r.data).toMatchObject({ delivered: false, httpStatus: null });
    expect(r.data.error).toMatch(/ECONNREFUSED/);
    await call(sys.gatewayUrl, `${M}/rest/unSubscribe`, { subscriptionId: id });
    expect(await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: id })).toEqual(err(100504, "subscribe id is not exist"));
  });

  it("custom headers go with every callback and a test delivery, stored sealed, shown by name only", async () => {
    const rx = await receiver();
    const id = await subscribe(sys.gatewayUrl, { topic: "hooks", url: rx.url("/h") });
    const headers = JSON.stringify({ Authorization: "Bearer tok-123", "X-Tenant": "acme" });
    const set = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, headers })) as {
      code: number;
      data: Record<string, unknown>;
    };
    expect(set.code, JSON.stringify(set)).toBe(0);
    expect(set.data.headers).toEqual(["authorization", "x-tenant"]);
    expect(JSON.stringify(set)).not.toContain("tok-123");
    const read = (await admin(sys.gatewayUrl, L, "subscriptionSettings", { subscriptionId: id })) as { data: Record<string, unknown> };
    expect(read.data.headers).toEqual(["authorization", "x-tenant"]);

    const eventId = await publish(sys.gatewayUrl, "hooks", "with headers");
    await rx.until(() => rx.deliveredIds(id).includes(eventId), "the event with its headers");
    const got = rx.requests.find((r) => r.body.includes(eventId)) as (typeof rx.requests)[number];
    expect(got.headers.authorization).toBe("Bearer tok-123");
    expect(got.headers["x-tenant"]).toBe("acme");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(signedWith(deploymentKey, got)).toBe(true);
    await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: id });
    expect(rx.requests.at(-1)?.headers.authorization).toBe("Bearer tok-123");

    // Sealed at rest with SECRETS_KEY, as the signing secrets are.
    const pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 1));
    try {
      const row = await pool.query<{ headers: string }>("SELECT headers FROM subscription_settings WHERE subscription_id = $1", [id]);
      expect(row.rows[0]?.headers).toMatch(/^v1:/);
      expect(row.rows[0]?.headers).not.toContain("tok-123");
    } finally {
      await pool.end();
    }
    const cleared = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, headers: "" })) as {
      data: Record<string, unknown>;
    };
    expect(cleared.data.headers).toBeNull();
  });

  it("refuses header names the broker or HTTP owns, and oversized headers, with 100517", async () => {
    const rx = await receiver();
    const id = await subscribe(sys.gatewayUrl, { topic: "hooks", url: rx.url() });
    for (const headers of [
      '{"Host":"x"}',
      '{"webhook-signature":"v1,x"}',
      '{"content-type":"text/plain"}',
      '{"connection":"close"}',
      '{"a":"b\\r\\nc: d"}',
      "[]",
      "nope",
      JSON.stringify({ a: "v".repeat(1025) }),
    ]) {
      const r = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, headers })) as { code: number };
      expect(r.code, headers).toBe(100517);
    }
  });

  it("bodyMode=raw: the published content is the body, the metadata in headers, signed over the raw body", async () => {
    const rx = await receiver();
    const id = (await sub({ topic: "hooks/raw", url: rx.url("/raw"), bodyMode: "raw" })).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const shown = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id })) as { data: { bodyMode: string } };
    expect(shown.data.bodyMode).toBe("raw");
    const json = '{"order":4711,"note":"ünïcode"}';
    const first = await publish(sys.gatewayUrl, "hooks/raw", json, { "event-format": "json" });
    const second = await publish(sys.gatewayUrl, "hooks/raw", "plain bytes");
    await rx.until(() => rx.requests.filter((r) => r.status === 200).length >= 2, "both raw callbacks");
    const [a, b] = rx.requests as [(typeof rx.requests)[number], (typeof rx.requests)[number]];
    expect(a.body).toBe(json);
    expect(a.headers["content-type"]).toBe("application/json");
    expect(a.headers["evb-event-id"]).toBe(first);
    expect(a.headers["evb-topic"]).toBe("hooks/raw");
    expect(a.headers["evb-subscription-id"]).toBe(id);
    expect(a.headers["webhook-id"]).toBe(`msg_${id}_${first}`);
    expect(signedWith(deploymentKey, a)).toBe(true);
    expect(b.body).toBe("plain bytes");
    expect(b.headers["content-type"]).toBe("application/octet-stream");
    expect(b.headers["evb-event-id"]).toBe(second);
    expect(signedWith(deploymentKey, b)).toBe(true);

    // A test delivery goes the same way; back to the envelope, the original's body again.
    const t = (await admin(sys.gatewayUrl, M, "testDelivery", { subscriptionId: id })) as TestAnswer;
    expect(t.data.delivered).toBe(true);
    const tested = rx.requests.at(-1) as (typeof rx.requests)[number];
    expect(JSON.parse(tested.body)).toMatchObject({ test: true });
    expect(tested.headers["evb-event-id"]).toBe(t.data.eventId);
    expect(tested.headers["webhook-test"]).toBe("true");
    await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, bodyMode: "envelope" });
    const third = await publish(sys.gatewayUrl, "hooks/raw", "again");
    await rx.until(() => rx.requests.some((r) => r.body.includes(third)), "the enveloped callback");
    const enveloped = rx.requests.find((r) => r.body.includes(third)) as (typeof rx.requests)[number];
    expect(JSON.parse(enveloped.body)).toMatchObject({ subscriptionId: id, event: { eventId: third } });
    expect(enveloped.headers["evb-event-id"]).toBeUndefined();
    expect((await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, bodyMode: "jsonish" })) as object).toMatchObject({
      code: 100518,
    });
  });

  it("a content filter passes over the events it refuses, in order, without a callback or an attempt", async () => {
    const rx = await receiver();
    const filter = JSON.stringify([
      { path: "order.status", equals: "paid" },
      { path: "region", in: ["eu", "us"] },
    ]);
    const id = (await sub({ topic: "hooks/filtered", url: rx.url("/f"), filter })).text;
    const all = (await sub({ topic: "hooks/filtered", url: rx.url("/all") })).text;
    const shown = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id })) as { data: { filter: unknown } };
    expect(shown.data.filter).toEqual(JSON.parse(filter));
    const contents = [
      { order: { status: "paid" }, region: "eu" },
      { order: { status: "open" }, region: "eu" },
      "not json at all",
      { order: { status: "paid" }, region: "apac" },
      { order: { status: "paid" }, region: "us" },
    ];
    const ids: string[] = [];
    for (const c of contents) ids.push(await publish(sys.gatewayUrl, "hooks/filtered", typeof c === "string" ? c : JSON.stringify(c)));
    await rx.until(() => rx.requests.filter((r) => r.path === "/all").length >= ids.length, "every event at the unfiltered subscription");
    await rx.until(() => rx.deliveredIds(id).includes(ids[4] as string), "the last matching event");
    expect(rx.deliveredIds(id)).toEqual([ids[0], ids[4]]);
    expect(rx.requests.filter((r) => r.path === "/f")).toHaveLength(2);
    const attempts = (await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: id })) as { data: { total: number } };
    expect(attempts.data.total).toBe(2);

    for (const bad of ["status == paid", "[]", '[{"path":"a","regex":"x"}]'])
      expect(
        ((await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: all, filter: bad })) as { code: number }).code,
      ).toBe(100519);
  });
});
