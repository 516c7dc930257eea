import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BrokerClientE,
  BrokerClientL,
  BrokerClientM,
  BrokerError,
  BrokerTransportError,
  type ClientOptions,
  decodeContent,
  verifyWebhook,
} from "evb-client";
import { signWebhook } from "@evb/domain";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";

// Crash survived: none. The typed client against a real broker (gateway, indexer, notifier over
// Kafka, Postgres, Redis) with Basic authentication on and signed callbacks: every variant's
// reply shapes come back typed, broker errors as BrokerError, refusals and dead ends as
// BrokerTransportError; verifyWebhook accepts what the notifier really signed.
describe("evb-client against the real stack", () => {
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const basic = "evb:pa:ss";
  let sys: TestSystem;
  let rx: Receiver;
  const opts = (path: string): ClientOptions => ({ baseUrl: `${sys.gatewayUrl}${path}`, basic, timeoutMs: 20_000 });
  const topic = `client.${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    rx = await Receiver.start();
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        API_BASIC_AUTH: basic,
        API_KEYS: "true",
        ...QUICK_CALLBACKS_ENV,
        WEBHOOK_SECRETS: secret,
      },
    });
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("runs the topic and event operations in every variant with typed results", async () => {
    const l = new BrokerClientL(opts("/event-broker"));
    const m = new BrokerClientM(opts("/event-m"));
    const e = new BrokerClientE(opts("/event-e"));
    expect(await l.open(topic)).toBe(true);
    expect(await m.exist(topic)).toBe(true);
    expect(await e.exist(`${topic}.none`)).toBe(false);
    const sent = await l.publish(topic, "hello 世界", { extensions: { "event-format": "text" } });
    expect(sent).toMatchObject({ status: "SUCCESS", topic });
    const ev = await l.getEvent(sent.eventId as string);
    expect(decodeContent(ev)).toBe("hello 世界");
    expect(ev.extensions?.["event-format"]).toBe("text");
    expect(JSON.parse(ev.extensions?.["event-plus"] as string)).toMatchObject({ height: expect.any(Number) });
    expect(Object.keys(await e.getEvent(sent.eventId as string))).toEqual(["topic", "content", "eventId"]);
    const ls = await l.state(topic);
    expect(ls).toMatchObject({ topicName: topic, sequenceNumber: 1, lastSender: null });
    expect(Object.keys(await e.state(topic))).toEqual(["topicName", "topicAddress", "senderAddress", "createdTimestamp"]);
    const page = await m.list({ pageIndex: 0, pageSize: 100 });
    expect(page.topicInfoList.map((t) => t.topicName)).toContain(topic);
    expect(await m.close(topic)).toBe(true);
  });

  it("publishWithRetry publishes once, and a retry with its key answers the same event", async () => {
    const m = new BrokerClientM(opts("/event-m"));
    const e = new BrokerClientE(opts("/event-e"));
    const t = `${topic}/retry`;
    await m.open(t);
    const first = await m.publishWithRetry(t, "once", { idempotencyKey: `retry-${topic}` });
    expect(first).toMatchObject({ status: "SUCCESS", topic: t });
    // As a retry after a lost answer would: the same key and content store nothing twice.
    expect(await e.publishWithRetry(t, "once", { idempotencyKey: `retry-${topic}` })).toEqual(first);
    expect((await m.publishWithRetry(t, "fresh key")).eventId).not.toBe(first.eventId);
    // A final refusal is not retried: it rejects at once.
    await expect(m.publishWithRetry(`${t}/none`, "x", { attempts: 3 })).rejects.toMatchObject({ code: 100101 });
  });

  it("throws one BrokerError type with the code and exact message in every variant's error shape", async () => {
    for (const c of [new BrokerClientL(opts("/event-broker")), new BrokerClientM(opts("/event-m")), new BrokerClientE(opts("/event-e"))]) {
      const err = await c.close(`${topic}.missing`).catch((x: unknown) => x);
      expect(err, c.variant).toBeInstanceOf(BrokerError);
      expect(err).toMatchObject({ code: 100101, brokerMessage: "topic not exist", operation: "rest/close" });
    }
    const l = new BrokerClientL(opts("/event-broker"));
    await expect(l.validateGroupId("9")).rejects.toMatchObject({ code: 200211, brokerMessage: "unknown group id" });
    await expect(l.list({ pageIndex: 0, pageSize: 101 })).rejects.toMatchObject({ code: 100107 });
    await expect(new BrokerClientM(opts("/event-m")).blockList({ pageNumber: 999_999, pageSize: 10 })).rejects.toMatchObject({
      code: -1,
      brokerMessage: "pageIndex error.",
    });
  });

  it("reads the admin operations", async () => {
    const l = new BrokerClientL(opts("/event-broker"));
    const e = new BrokerClientE(opts("/event-e"));
    expect(await l.listGroup()).toEqual(["1"]);
    expect(Object.keys(await l.getVersion())).toEqual(["eventVersion", "gitCommitTimeStamp", "gitBranch", "gitCommitHash"]);
    const general = await l.groupGeneral();
    expect(general.latestBlock).toBeGreaterThanOrEqual(1);
    const blocks = await l.blockList({ pageNumber: 1, pageSize: 10 });
    expect(blocks.pageData[0]?.blockNumber).toBeGreaterThanOrEqual(1);
    const txs = await l.transList({ pageNumber: 1, pageSize: 10, blockNumber: blocks.pageData[0]?.blockNumber });
    expect(txs.pageData.length).toBeGreaterThanOrEqual(1);
    expect((await l.nodeList({ pageNumber: 1, pageSize: 10 })).pageData[0]?.nodeType).toBe("sealer");
    expect((await l.getContractContext()).blockLimit).toBe(general.latestBlock + 500);
    expect((await e.blockchaininfo()).blockNumber).toBe(general.latestBlock);
    expect(await l.listNodes()).toHaveLength(1);
  });

  it("subscribes, verifies the signed callbacks, lists, dead-letters, replays and unsubscribes", async () => {
    const m = new BrokerClientM(opts("/event-m"));
    const l = new BrokerClientL(opts("/event-broker"));
    const e = new BrokerClientE(opts("/event-e"));
    const t = `${topic}/dl`;
    await m.open(t);
    let failing = true;
    rx.answer = () => ({ status: failing ? 500 : 200 });
    const id = await m.subscribe(`${topic}/#`, rx.url());
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const node = (await l.listNodes())[0] as string;
    expect((await m.listSubscription(node))[node]?.[id]?.topicName).toBe(`${topic}/#`);
    expect((await l.listSubscription([node]))[node]?.map((s) => s.subscribeId)).toContain(id);
    expect(Object.keys((await e.listSubscription())[node] ?? {})).toContain(id);
    const first = await m.publish(t, "one");
    await m.publish(t, "two");
    const deadline = Date.now() + 30_000;
    while (!(await m.deadLetters()).some((d) => d.subscriptionId === id)) {
      if (Date.now() > deadline) throw new Error("no dead letter");
      await new Promise((r) => setTimeout(r, 200));
    }
    const dead = (await m.deadLetters()).find((d) => d.subscriptionId === id);
    expect(dead).toMatchObject({ eventId: first.eventId, attempts: 2, notifyingEventCount: "2" });
    failing = false;
    expect(await l.replayDeadLetters(id)).toEqual([id]);
    await rx.until(() => rx.deliveredIds(id).length === 2, "two deliveries after replay");
    const req = rx.requests.find((r) => r.status === 200) as (typeof rx.requests)[number];
    const ok = verifyWebhook({ secret, headers: req.headers, body: req.body });
    expect(ok).toMatchObject({ ok: true, payload: { subscriptionId: id, event: { eventId: first.eventId } } });
    expect(verifyWebhook({ secret, headers: req.headers, body: req.body.replace(first.eventId as string, "00000000-1-1") }).ok).toBe(false);
    expect(verifyWebhook({ secret: `whsec_${randomBytes(32).toString("base64")}`, headers: req.headers, body: req.body }).ok).toBe(false);
    const log = await m.deliveryAttempts(id, { pageSize: 100 });
    expect(log.pageData.some((a) => !a.delivered && a.httpStatus === 500 && a.eventId === first.eventId)).toBe(true);
    await expect(m.deliveryAttempts(id, { pageSize: 101 })).rejects.toMatchObject({ code: 100107 });
    expect(await m.unSubscribe(id)).toBe(true);
    await expect(m.unSubscribe(id)).rejects.toMatchObject({ code: 100504 });
  });

  it("gives a subscription its own settings at subscribe time and after, and a secret of its own that verifyWebhook accepts", async () => {
    const m = new BrokerClientM(opts("/event-m"));
    const e = new BrokerClientE(opts("/event-e"));
    const t = `${topic}/own`;
    await m.open(t);
    rx.answer = () => ({ status: 200 });
    const alerts = rx.url("/alerts");
    const id = await e.subscribe(t, rx.url(), { settings: { maxRate: 50, retryMaxAttempts: 3, paused: true, alertUrl: alerts } });
    expect(await m.subscriptionSettings(id)).toMatchObject({
      subscriptionId: id,
      maxRate: 50,
      retryMaxAttempts: 3,
      paused: true,
      alertUrl: alerts,
    });
    // An alert URL is checked at subscribe as admin/subscriptionSettings checks it: not a URL 100513, a refused host 100502.
    await expect(e.subscribe(t, rx.url(), { settings: { alertUrl: "mailto:ops@example.com" } })).rejects.toMatchObject({ code: 100513 });
    await expect(e.subscribe(t, rx.url(), { settings: { alertUrl: "http://169.254.169.254/alerts" } })).rejects.toMatchObject({
      code: 100502,
    });
    expect(await m.subscriptionSettings(id, { alertUrl: null })).toMatchObject({ alertUrl: null });
    const rotated = await e.rotateSigningSecret(id, 0);
    expect(rotated.signing).toBe("own");
    const own = rotated.secret as string;
    expect((await e.subscriptionSettings(id)).secret).toBeUndefined();
    const sent = await m.publish(t, "own");
    expect(await m.subscriptionSettings(id, { paused: false, maxRate: null })).toMatchObject({ paused: false, maxRate: null });
    await rx.until(() => rx.deliveredIds(id).length === 1, "the callback after the resume");
    const req = rx.requests.find((r) => r.body.includes(sent.eventId as string)) as (typeof rx.requests)[number];
    expect(verifyWebhook({ secret: own, headers: req.headers, body: req.body }).ok).toBe(true);
    expect(verifyWebhook({ secret, headers: req.headers, body: req.body }).ok).toBe(false);
    await expect(m.subscriptionSettings(id, { deliveryWindow: 0 })).rejects.toMatchObject({ code: 100513 });
    // The own secret dropped: the deployment's secrets sign again.
    expect((await e.dropSigningSecret(id)).signing).not.toBe("own");
    const again = await m.publish(t, "deployment");
    await rx.until(() => rx.requests.some((r) => r.body.includes(again.eventId as string)), "the callback after the drop");
    const back = rx.requests.find((r) => r.body.includes(again.eventId as string)) as (typeof rx.requests)[number];
    expect(verifyWebhook({ secret, headers: back.headers, body: back.body }).ok).toBe(true);
    expect(verifyWebhook({ secret: own, headers: back.headers, body: back.body }).ok).toBe(false);
    expect(await e.unSubscribe(id)).toBe(true);
  });

  it("sends an API key as a bearer token; a key without the operation's role gets 403, a bad key 401", async () => {
    const key = (roles: string) => {
      const r = spawnSync(process.execPath, ["scripts/keys.ts", "create", "--roles", roles, "--groups", "*", "--name", `client-${roles}`], {
        cwd: join(import.meta.dirname, "..", ".."),
        env: { ...process.env, ...sys.env },
        encoding: "utf8",
        timeout: 60_000,
      });
      if (r.status !== 0) throw new Error(`keys create failed: ${r.stderr}`);
      return r.stdout.trim();
    };
    const base = `${sys.gatewayUrl}/event-m`;
    const admin = new BrokerClientM({ baseUrl: base, token: key("admin") });
    expect(await admin.open(`${topic}.keyed`)).toBe(true);
    expect(Array.isArray(await admin.replayDeadLetters())).toBe(true);
    const reader = new BrokerClientM({ baseUrl: base, token: key("read") });
    expect(await reader.exist(`${topic}.keyed`)).toBe(true);
    await expect(reader.publish(`${topic}.keyed`, "not mine to write")).rejects.toMatchObject({ failure: "http", status: 403 });
    const bogus = new BrokerClientM({ baseUrl: base, token: "evbk_000000000000_nope" });
    await expect(bogus.exist(topic)).rejects.toMatchObject({ failure: "http", status: 401 });
  });

  it("verifyWebhook agrees with the broker's signer on a key rotation", () => {
    const old = `whsec_${randomBytes(32).toString("base64")}`;
    const body = '{"subscriptionId":"x","event":{"topic":"t","content":"","eventId":"e"}}';
    const keys = [secret, old].map((s) => Buffer.from(s.slice(6), "base64"));
    const header = signWebhook({ id: "msg_x", timestampSec: 1_800_000_000, body, keys });
    const headers = { "webhook-id": "msg_x", "webhook-timestamp": "1800000000", "webhook-signature": header };
    expect(verifyWebhook({ secret: old, headers, body, nowSec: 1_800_000_000 }).ok).toBe(true);
  });

  it("reports refused credentials, an unreachable broker, a timeout and an abort as BrokerTransportError", async () => {
    const anon = new BrokerClientL({ baseUrl: `${sys.gatewayUrl}/event-broker` });
    await expect(anon.listGroup()).rejects.toMatchObject({ failure: "http", status: 401 });
    const wrong = new BrokerClientL({ baseUrl: `${sys.gatewayUrl}/event-broker`, basic: { user: "evb", password: "nope" } });
    await expect(wrong.listGroup()).rejects.toMatchObject({ failure: "http", status: 401 });
    // A port that accepts connections and never answers.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as { port: number }).port;
    const stuck = new BrokerClientL({ baseUrl: `http://127.0.0.1:${port}/event-broker`, timeoutMs: 300 });
    await expect(stuck.listGroup()).rejects.toMatchObject({ failure: "timeout" });
    const ac = new AbortController();
    const pending = stuck.listGroup({ signal: ac.signal, timeoutMs: 60_000 });
    ac.abort();
    await expect(pending).rejects.toMatchObject({ failure: "aborted" });
    silent.close();
    const gone = new BrokerClientL({ baseUrl: `http://127.0.0.1:${port}/event-broker` });
    const err = await gone.listGroup().catch((x: unknown) => x);
    expect(err).toBeInstanceOf(BrokerTransportError);
    expect(err).toMatchObject({ failure: "network" });
  });
});
