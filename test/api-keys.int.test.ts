import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiRole, ApiKeyStore, poolOptions } from "@evb/storage";
import { callFrom } from "./support/http-from.ts";
import { openClient, mqttWsUrl } from "./mqtt/raw-mqtt.ts";
import { frame, hdr, RawStomp, stompUrl } from "./support/stomp.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";
import { createKey } from "./support/api-keys.ts";

const M = "/event-m";
const L = "/event-broker";
const E = "/event-e";

// Crash survived: none. API keys with roles and groups over real sockets, two gateways sharing
// one publish rate limit in Redis, revocation seen within API_KEY_CACHE_MS, and subscription
// ownership by key, also of ended ids (docs/security.md).
describe("API keys with roles", () => {
  let sys: TestSystem;
  let pool: pg.Pool;
  let store: ApiKeyStore;
  let rx: Receiver;
  const keys: Record<string, string> = {};
  const ids: Record<string, string> = {};

  const make = async (name: string, roles: ApiRole[], groups: string[], rate: number | null = null, burst: number | null = null) => {
    const k = await createKey(store, { name, roles, groups: groups, publishRate: rate, publishBurst: burst });
    keys[name] = k.key;
    ids[name] = k.id;
  };
  const as = (name: string | null, path: string, params: Record<string, string> = {}, gateway = 0, from = "127.0.0.1") =>
    callFrom(
      from,
      sys.gatewayUrls[gateway] as string,
      path,
      params,
      name === null ? {} : { authorization: `Bearer ${keys[name] ?? name}` },
    );

  beforeAll(async () => {
    sys = await TestSystem.start({
      gateways: 2,
      env: { GROUP_IDS: "1,2", API_KEYS: "true", API_KEY_CACHE_MS: "300", CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8" },
    });
    pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 2));
    store = new ApiKeyStore(pool);
    await make("pub", ["publish"], ["1"]);
    await make("pubB", ["publish"], ["1"]);
    await make("pub2", ["publish"], ["2"]);
    await make("reader", ["read"], ["1"]);
    await make("admin", ["admin"], ["*"]);
    await make("subA", ["subscribe"], ["1"]);
    await make("subB", ["subscribe"], ["1"]);
    await make("limited", ["publish"], ["1"], 0.01, 2);
    await make("reader2", ["read"], ["2"]);
    await make("sub2", ["subscribe"], ["2"]);
    rx = await Receiver.start();
  });
  afterAll(async () => {
    await rx?.close();
    await pool?.end();
    await sys?.stop();
  });

  it("answers 401 with one JSON body for no key, a malformed key, a wrong secret and an unknown id", async () => {
    const wrongSecret = `${keys.pub?.slice(0, -4)}AAAA`;
    const answers = await Promise.all([
      as(null, `${L}/admin/getVersion`),
      as("not-a-key", `${L}/admin/getVersion`),
      as(wrongSecret, `${L}/admin/getVersion`),
      as(`evbk_000000000000_${"A".repeat(43)}`, `${L}/admin/getVersion`),
      callFrom("127.0.0.1", sys.gatewayUrl, `${L}/admin/getVersion`, {}, { authorization: "Basic b3BzOng=" }),
    ]);
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.contentType).toMatch(/^application\/json/);
      expect(a.json).toEqual(answers[0]?.json);
      expect(a.headers["www-authenticate"]).toMatch(/^Bearer realm=/);
    }
    expect((await fetch(`${sys.gatewayUrl}/health`)).status).toBe(200);
  });

  it("maps each operation to its role and each call to its group; a refusal is 403 without detail", async () => {
    expect((await as("pub", `${M}/rest/open`, { topic: "keyed" })).json).toBe(true);
    const sent = await as("pub", `${M}/rest/publish`, { topic: "keyed", content: "hi" });
    expect((sent.json as { status: string }).status, sent.text).toBe("SUCCESS");
    const eventId = (sent.json as { eventId: string }).eventId;
    expect((await as("reader", `${M}/rest/getEvent`, { eventId })).status).toBe(200);
    expect((await as("reader", `${M}/rest/state`, { topic: "keyed" })).status).toBe(200);
    expect((await as("reader", `${L}/admin/listSubscription`, { nodeInstances: "x:1" })).status).toBe(200);
    expect((await as("pub2", `${M}/rest/open`, { topic: "keyed2", groupId: "2" })).json).toBe(true);
    expect((await as("admin", `${M}/rest/close`, { topic: "keyed2", groupId: "2" })).status).toBe(200);
    expect((await as("admin", `${L}/admin/replayDeadLetters`)).status).toBe(200);

    const refused = [
      await as("reader", `${M}/rest/publish`, { topic: "keyed", content: "no" }),
      await as("reader", `${M}/rest/open`, { topic: "other" }),
      await as("pub", `${M}/rest/getEvent`, { eventId }),
      await as("pub", `${M}/rest/publish`, { topic: "keyed", content: "no", groupId: "2" }),
      await as("pub", `${M}/rest/close`, { topic: "keyed" }),
      await as("pub2", `${M}/rest/publish`, { topic: "keyed", content: "no" }),
      await as("reader", `${L}/admin/deadLetters`),
      await as("subA", `${M}/rest/publish`, { topic: "keyed", content: "no" }),
    ];
    for (const r of refused) {
      expect(r.status, r.text).toBe(403);
      expect(r.json).toEqual(refused[0]?.json);
    }
    // Nothing refused was written: only "hi" is in the topic.
    const state = (await as("reader", `${M}/rest/state`, { topic: "keyed" })).json as { sequenceNumber: number };
    expect(state.sequenceNumber).toBe(1);
  });

  it("a per-key publish rate limit is one bucket shared by every gateway: 429 with Retry-After past it", async () => {
    await as("pub", `${M}/rest/open`, { topic: "limited" });
    const one = await as("limited", `${M}/rest/publish`, { topic: "limited", content: "1" }, 0);
    const two = await as("limited", `${M}/rest/publish`, { topic: "limited", content: "2" }, 1);
    expect([one.status, two.status]).toEqual([200, 200]);
    for (const gw of [0, 1]) {
      const over = await as("limited", `${M}/rest/publish`, { topic: "limited", content: "3" }, gw);
      expect(over.status).toBe(429);
      expect(over.json).toMatchObject({ status: 429, error: "Too Many Requests" });
      expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    }
    // Other keys are not limited by it.
    expect((await as("pub", `${M}/rest/publish`, { topic: "limited", content: "4" })).status).toBe(200);
  });

  it("a revoked key is refused once the gateways' cache (API_KEY_CACHE_MS) has passed", async () => {
    await make("doomed", ["read"], ["1"]);
    expect((await as("doomed", `${L}/admin/getVersion`)).status).toBe(200);
    expect(await store.revoke(ids.doomed as string, Date.now())).toBe(true);
    await expect.poll(async () => (await as("doomed", `${L}/admin/getVersion`)).status).toBe(401);
    await expect.poll(async () => (await as("doomed", `${L}/admin/getVersion`, {}, 1)).status).toBe(401);
  });

  it("with keys, a subscription belongs to its key: another key keeps the URL and cannot unSubscribe (100504)", async () => {
    const urlOf = async (id: string) => (await pool.query("SELECT url FROM subscriptions WHERE id = $1", [id])).rows[0]?.url;
    const id = (await as("subA", `${M}/rest/subscribe`, { topic: "keyed", url: rx.url("/a") })).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // Same address, other key: the same id is answered, the URL stays.
    expect((await as("subB", `${M}/rest/subscribe`, { topic: "keyed", url: rx.url("/b"), subscriptionId: id })).text).toBe(id);
    expect(await urlOf(id)).toBe(rx.url("/a"));
    expect((await as("subB", `${M}/rest/unSubscribe`, { subscriptionId: id })).json).toEqual({
      code: 100504,
      message: "subscribe id is not exist",
    });
    // The owning key from another address may switch it and end it.
    expect((await as("subA", `${M}/rest/subscribe`, { topic: "keyed", url: rx.url("/c"), subscriptionId: id }, 0, "127.0.0.2")).text).toBe(
      id,
    );
    expect(await urlOf(id)).toBe(rx.url("/c"));
    expect((await as("subA", `${M}/rest/unSubscribe`, { subscriptionId: id }, 1)).text).toBe("true");
  });

  it("defect 2: another key cannot take an id its owner ended; the owning key resumes it and ends it", async () => {
    const rowOf = async (id: string) =>
      (await pool.query("SELECT url, owner, active, unsubscribed_by AS by FROM subscriptions WHERE id = $1", [id])).rows[0];
    const id = (await as("subA", `${M}/rest/subscribe`, { topic: "keyed", url: rx.url("/a") })).text;
    expect((await as("subA", `${M}/rest/unSubscribe`, { subscriptionId: id })).text).toBe("true");
    // Another key, same address: the id is answered (8.2) but nothing is taken.
    expect((await as("subB", `${M}/rest/subscribe`, { topic: "keyed", url: rx.url("/b"), subscriptionId: id })).text).toBe(id);
    expect(await rowOf(id)).toEqual({ url: rx.url("/a"), owner: `key:${ids.subA}`, active: false, by: `key:${ids.subA}` });
    expect((await as("subB", `${M}/rest/unSubscribe`, { subscriptionId: id })).json).toMatchObject({ code: 100504 });
    // The owning key resumes with its new URL and may end it again.
    expect((await as("subA", `${M}/rest/subscribe`, { topic: "keyed", url: rx.url("/a2"), subscriptionId: id })).text).toBe(id);
    expect(await rowOf(id)).toMatchObject({ url: rx.url("/a2"), owner: `key:${ids.subA}`, active: true });
    expect((await as("subA", `${M}/rest/unSubscribe`, { subscriptionId: id })).text).toBe("true");
  });

  it("defect 4: E admin/blockchaininfo is group 1 for authorization, whatever groupId says", async () => {
    expect((await as("reader2", `${E}/admin/blockchaininfo`)).status).toBe(403);
    expect((await as("reader2", `${E}/admin/blockchaininfo`, { groupId: "2" })).status).toBe(403);
    const one = await as("reader", `${E}/admin/blockchaininfo`, { groupId: "2" });
    expect(one.status, one.text).toBe(200);
    expect(one.json).toHaveProperty("blockNumber");
  });

  it("defect 5: a key of group 2 ends its group-2 subscription with the interface's parameters (no groupId)", async () => {
    const id = (await as("sub2", `${M}/rest/subscribe`, { topic: "keyed2", url: rx.url("/g2"), groupId: "2" })).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await as("sub2", `${M}/rest/unSubscribe`, { subscriptionId: id })).text).toBe("true");
    // Ownership still holds: another key's call on a live id of sub2 answers 100504.
    const again = (await as("sub2", `${M}/rest/subscribe`, { topic: "keyed2", url: rx.url("/g2"), groupId: "2", subscriptionId: id })).text;
    expect(again).toBe(id);
    expect((await as("subA", `${M}/rest/unSubscribe`, { subscriptionId: id })).json).toMatchObject({ code: 100504 });
  });

  it("an unknown path is answered as the variant does before authorization, whatever the key's roles (as docs say since defect 11(a))", async () => {
    const known = await as("reader", `${M}/rest/nope`);
    const r = await as("pub", `${M}/rest/nope`);
    expect(r.status).toBe(known.status);
    expect(r.text).toBe(known.text);
    expect(r.status).not.toBe(403);
  });

  // Issue 28: an Idempotency-Key is stored within its API key's scope. Before, another key of the
  // group that used a guessable key first blocked the owner's publish (100211) for the window, and
  // a repeat of a guessed content answered the owner's eventId, confirming the guess.
  it("another key of the group using an idempotency key first neither blocks nor reveals the owner's publish", async () => {
    await as("pub", `${M}/rest/open`, { topic: "idem" });
    type Sent = { status: string; eventId: string };
    const send = async (name: string, content: string, key: string, gateway = 0) => {
      const r = await as(name, `${M}/rest/publish`, { topic: "idem", content, idempotencyKey: key }, gateway);
      expect(r.status, r.text).toBe(200);
      return r.json as Sent;
    };
    const squat = await send("pubB", "a guess", "order-4711");
    const owner = await send("pub", "the real order", "order-4711", 1);
    expect(owner.status).toBe("SUCCESS");
    expect(owner.eventId).not.toBe(squat.eventId);
    // The owner's retry, through the other gateway, still answers its own first event.
    expect(await send("pub", "the real order", "order-4711", 0)).toEqual(owner);

    const secret = await send("pub", "the owner's content", "order-4712");
    const probe = await send("pubB", "the owner's content", "order-4712", 1);
    expect(probe.status).toBe("SUCCESS");
    expect(probe.eventId).not.toBe(secret.eventId);
    const state = (await as("reader", `${M}/rest/state`, { topic: "idem" })).json as { sequenceNumber: number };
    expect(state.sequenceNumber).toBe(4);
  });

  // Issue 28: the scope is the API key on every way in, so STOMP and MQTT keep it too.
  it("over STOMP and MQTT an idempotency key is its API key's too: another key's use first does not block it", async () => {
    await as("pub", `${M}/rest/open`, { topic: "idem-wire" });
    const first = await as("pubB", `${M}/rest/publish`, { topic: "idem-wire", content: "B's", idempotencyKey: "order-9" });
    expect((first.json as { status: string }).status, first.text).toBe("SUCCESS");
    const stomp = await RawStomp.open(stompUrl(sys.gatewayUrl));
    try {
      expect((await stomp.connect({ login: "k", passcode: keys.pub as string })).command).toBe("CONNECTED");
      stomp.send(frame("SEND", { destination: "idem-wire", receipt: "1", "idempotency-key": "order-9" }, "A's"));
      const sent = await stomp.nth(1);
      expect(sent.command, sent.body).toBe("RECEIPT");
      expect(hdr(sent, "eventId")).not.toBe((first.json as { eventId: string }).eventId);
    } finally {
      stomp.close();
    }
    // MQTT 5: A's repeat over MQTT is A's STOMP publish again (a PUBACK without failure); B's key, B's own.
    for (const [name, content] of [
      ["pub", "A's"],
      ["pubB", "B's"],
    ] as const) {
      const { client } = await openClient(mqttWsUrl(sys.gatewayUrl, M), { protocolVersion: 5, username: "k", password: keys[name] });
      try {
        // mqtt.js rejects a PUBACK with a failure reason (0x80 for 100211).
        await client.publishAsync("idem-wire", content, {
          qos: 1,
          properties: { userProperties: { "idempotency-key": "order-9" } },
        });
      } finally {
        await client.endAsync(true);
      }
    }
    const state = (await as("reader", `${M}/rest/state`, { topic: "idem-wire" })).json as { sequenceNumber: number };
    expect(state.sequenceNumber).toBe(2);
  });

  // Issue 28: admin/subscriptionSettings showed an alert URL's user, password and token whole to
  // any key that may configure the subscription; every other view shows it whole to its owning key only.
  it("admin/subscriptionSettings shows an alert URL whole to the owning key only, redacted to an admin key", async () => {
    await as("pub", `${M}/rest/open`, { topic: "alerted" });
    const alertUrl = rx.url("/alerts?token=s3cret").replace("http://", "http://ops:hunter2@");
    const id = (await as("subA", `${M}/rest/subscribe`, { topic: "alerted", url: rx.url("/a"), alertUrl })).text;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const shown = async (name: string, params: Record<string, string> = {}) => {
      const r = await as(name, `${M}/admin/subscriptionSettings`, { subscriptionId: id, ...params });
      expect((r.json as { code: number }).code, r.text).toBe(0);
      return (r.json as { data: { alertUrl: string } }).data.alertUrl;
    };
    const redacted = rx.url("/alerts?token=***").replace("http://", "http://***:***@");
    expect(await shown("subA")).toBe(alertUrl);
    expect(await shown("admin")).toBe(redacted);
    // A change answers the settings as they are then: redacted the same way.
    expect(await shown("admin", { maxRate: "5" })).toBe(redacted);
    expect(await shown("subA", { maxRate: "6" })).toBe(alertUrl);
  });
});
