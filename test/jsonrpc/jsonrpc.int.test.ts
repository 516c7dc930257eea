import { gzipSync } from "node:zlib";
import { type JSONRPCErrorException, JSONRPCErrorException as RpcException } from "json-rpc-2.0";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Variant } from "@evb/domain";
import { type ApiRole, ApiKeyStore, poolOptions } from "@evb/storage";
import { ALL_VARIANTS, CONTEXT, expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import type { CallResult } from "../support/http.ts";
import { rawCall } from "../support/raw-http.ts";
import { TestSystem } from "../support/system.ts";
import { javaClientBody, javaClientCall, libraryClient } from "./jsonrpc-client.ts";
import { createKey } from "../support/api-keys.ts";

const b64 = (s: string) => Buffer.from(s).toString("base64");
const NEUTRAL_CLASS = "com.webank.event.sdk.BrokerException";
const TOPIC_INFO_KEYS: Record<Variant, string[]> = {
  E: ["topicName", "topicAddress", "senderAddress", "createdTimestamp"],
  M: ["topicName", "topicAddress", "senderAddress", "createdTimestamp", "sequenceNumber", "blockNumber"],
  L: [
    "topicName",
    "topicAddress",
    "senderAddress",
    "createdTimestamp",
    "sequenceNumber",
    "blockNumber",
    "lastTimestamp",
    "lastSender",
    "lastBlock",
  ],
};

/** The JSON-RPC reply of a single call: status, members in order, and the broker error's shape when it is one. */
function expectReply(
  r: CallResult,
  status: number,
): { id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } } {
  expect(r.status, r.text).toBe(status);
  expect(r.contentType).toBe("application/json-rpc;charset=UTF-8");
  const body = r.json as Record<string, unknown>;
  expect(Object.keys(body)[0]).toBe("jsonrpc");
  expect(body.jsonrpc).toBe("2.0");
  return body as never;
}

function expectBrokerError(r: CallResult, code: number, message: string, exceptionTypeName = NEUTRAL_CLASS): void {
  const body = expectReply(r, 200);
  expect(body.error, r.text).toEqual({ code, message, data: { exceptionTypeName, message } });
}

async function rpcError(p: PromiseLike<unknown>): Promise<JSONRPCErrorException> {
  try {
    await p;
  } catch (err) {
    if (err instanceof RpcException) return err;
    throw err;
  }
  throw new Error("the call succeeded");
}

// Crash survived: none. JSON-RPC 2.0 at {context}/jsonrpc over real sockets against the real
// pipeline: a JSON-RPC client library, requests in the original Java clients' recorded shape,
// standard errors, batches and notifications, hostile bodies; keys off on one gateway and on
// (with BRAND=weevent) on a second one over the same ledger.
describe("JSON-RPC", () => {
  let sys: TestSystem;
  let base: string;
  const topic = uniqueTopic("com.webank.jsonrpc");
  beforeAll(async () => {
    sys = await TestSystem.start();
    base = sys.gatewayUrl;
  });
  afterAll(async () => {
    await sys?.stop();
  });

  describe("driven by a JSON-RPC client library", () => {
    it("every method on every mount, results bare and shaped per mount, a publish answered once sealed", async () => {
      for (const v of ALL_VARIANTS) {
        const { client } = libraryClient(`${base}${CONTEXT[v]}/jsonrpc`);
        const t = `${topic}.${v}`;
        expect(await client.request("open", { topic: t })).toBe(true);
        expect(await client.request("open", [t, "1"])).toBe(true);
        expect(await client.request("exist", [t])).toBe(true);
        expect(await client.request("exist", { topic: `${t}.none`, groupId: "1" })).toBe(false);
        const sent = (await client.request("publish", { topic: t, content: b64("hello world") })) as Record<string, unknown>;
        expect(Object.keys(sent)).toEqual(["status", "topic", "eventId"]);
        expect(sent).toMatchObject({ status: "SUCCESS", topic: t });
        // Sealed before the answer: getEvent (a ledger read) finds it at once, over JSON-RPC and REST alike.
        const ev = (await client.request("getEvent", [sent.eventId, "1"])) as Record<string, unknown>;
        expect(ev).toMatchObject({ topic: t, content: b64("hello world"), eventId: sent.eventId });
        expect(expectSuccess(await rest(base, v, "getEvent", { eventId: String(sent.eventId) }), v)).toEqual(ev);
        const state = (await client.request("state", { topic: t, groupId: "1" })) as Record<string, unknown>;
        expect(Object.keys(state)).toEqual(TOPIC_INFO_KEYS[v]);
        expect(state).toEqual(expectSuccess(await rest(base, v, "state", { topic: t }), v));
        const page = (await client.request("list", [0, 10])) as { total: number; topicInfoList: Record<string, unknown>[] };
        expect(Object.keys(page)).toEqual(["total", "pageIndex", "pageSize", "topicInfoList"]);
        expect(page.total).toBeGreaterThan(0);
        for (const info of page.topicInfoList) expect(Object.keys(info)).toEqual(TOPIC_INFO_KEYS[v]);
        expect(await client.request("close", [t, "1"])).toBe(true);
      }
    });

    it("broker errors carry the REST operation's code and message, and data naming the exception class", async () => {
      const { client, seen } = libraryClient(`${base}${CONTEXT.M}/jsonrpc`);
      const missing = await rpcError(client.request("state", [`${topic}.missing`, "1"]));
      expect([missing.code, missing.message, missing.data]).toEqual([
        100101,
        "topic not exist",
        { exceptionTypeName: NEUTRAL_CLASS, message: "topic not exist" },
      ]);
      expect(seen.status).toBe(200);
      // The REST order: the group before the topic (200211 for a bad group and a bad topic).
      expect((await rpcError(client.request("open", ["", "9"]))).code).toBe(200211);
      expect((await rpcError(client.request("open", [""]))).code).toBe(100103);
      expect((await rpcError(client.request("list", [0, 101]))).code).toBe(100107);
      expect((await rpcError(client.request("list", [null, 10]))).code).toBe(100104);
      const mismatch = await rpcError(client.request("list", ["abc", 10]));
      expect([mismatch.code, mismatch.message]).toEqual([
        200203,
        `Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: "abc"`,
      ]);
      expect((await rpcError(client.request("publish", [topic, b64(" ")]))).code).toBe(100200);
      expect((await rpcError(client.request("publish", [`${topic}.missing`, b64("x")]))).code).toBe(100101);
      // An extension key without the prefix: 100206, which no REST call can reach.
      const key = await rpcError(client.request("publish", { topic, content: b64("x"), extensions: { format: "json" } }));
      expect([key.code, key.message]).toEqual([100206, "event extensions key not startwith event-"]);
      const lib = libraryClient(`${base}${CONTEXT.L}/jsonrpc`);
      expect((await rpcError(lib.client.request("list", { pageIndex: 0, pageSize: "x" }))).code).toBe(200000);
    });

    it("a batch answers each call in order (HTTP 500 when one failed), notifications run unanswered", async () => {
      const { client, seen } = libraryClient(`${base}${CONTEXT.E}/jsonrpc`);
      const t = `${topic}.batch`;
      const replies = await client.requestAdvanced([
        { jsonrpc: "2.0", id: 1, method: "open", params: [t] },
        { jsonrpc: "2.0", id: "two", method: "exist", params: [`${t}.none`] },
        { jsonrpc: "2.0", id: 3, method: "state", params: [`${t}.none`] },
      ]);
      expect(replies.map((r) => r.id)).toEqual([1, "two", 3]);
      expect(replies.map((r) => ("result" in r ? r.result : r.error?.code))).toEqual([true, false, 100101]);
      expect(seen.status).toBe(500);
      const ok = await client.requestAdvanced([
        { jsonrpc: "2.0", id: 4, method: "exist", params: [t] },
        { jsonrpc: "2.0", id: 5, method: "exist", params: { topic: t } },
      ]);
      expect(ok.map((r) => ("result" in r ? r.result : r.error))).toEqual([true, true]);
      expect(seen.status).toBe(200);

      const n = `${topic}.notified`;
      client.notify("open", [n], undefined);
      await seen.pending;
      expect([seen.status, seen.text]).toEqual([200, ""]);
      expect(await client.request("exist", [n])).toBe(true);
      // A batch of notifications only: nothing to answer.
      const only = await rawCall(base, {
        method: "POST",
        path: `${CONTEXT.E}/jsonrpc`,
        body: JSON.stringify(Array.from({ length: 100 }, () => ({ jsonrpc: "2.0", method: "exist", params: [n] }))),
      });
      expect([only.status, only.text]).toEqual([200, ""]);
    });

    it("publish with an idempotencyKey answers the first event again; a batch cannot carry the header", async () => {
      const { client } = libraryClient(`${base}${CONTEXT.M}/jsonrpc`);
      await client.request("open", [topic]);
      const args = { topic, content: b64("once"), idempotencyKey: `k-${topic}` };
      const first = (await client.request("publish", args)) as { eventId: string };
      const again = (await client.request("publish", args)) as { eventId: string };
      expect(again.eventId).toBe(first.eventId);
      const reused = await rpcError(client.request("publish", { ...args, content: b64("other") }));
      expect(reused.code).toBe(100211);
      const header = libraryClient(`${base}${CONTEXT.M}/jsonrpc`, { "idempotency-key": "h1" });
      const single = (await header.client.request("publish", [topic, "1", b64("by header"), {}])) as { status: string };
      expect(single.status).toBe("SUCCESS");
      const batch = await rawCall(base, {
        method: "POST",
        path: `${CONTEXT.M}/jsonrpc`,
        headers: { "idempotency-key": "h2" },
        body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "publish", params: [topic, b64("x")] }]),
      });
      expect(expectReply(batch, 400).error?.message).toMatch(/Idempotency-Key header cannot name a batch/);
    });
  });

  describe("requests of the original Java clients' shape", () => {
    const t = "com.webank.weevent.jsonrpc";
    it("v1.0 (named), v1.1 (positional, groupId empty) and v1.2 (positional, groupId 1) on M and E", async () => {
      for (const v of ["M", "E"] as const) {
        const ctx = CONTEXT[v];
        const call = (method: string, params: unknown) => javaClientCall(base, ctx, javaClientBody(method, params));
        const opened = expectReply(await call("open", { topic: t }), 200);
        expect(typeof opened.id).toBe("string");
        expect(opened.result).toBe(true);
        expect(expectReply(await call("open", { topic: t, groupId: "1" }), 200).result).toBe(true);
        expect(expectReply(await call("open", [t, ""]), 200).result).toBe(true);
        expect(expectReply(await call("exist", [t, ""]), 200).result).toBe(true);
        const page = expectReply(await call("list", { pageIndex: 0, pageSize: 10 }), 200).result as { topicInfoList: object[] };
        // v1.0's TopicInfo has six keys at most: M's and E's shapes are readable, L's nine are not.
        for (const info of page.topicInfoList) expect(TOPIC_INFO_KEYS.M).toEqual(expect.arrayContaining(Object.keys(info)));
        expect(expectReply(await call("list", [0, 10, "1"]), 200).result).toMatchObject({ pageIndex: 0 });
        const state = expectReply(await call("state", [t, "1"]), 200).result as object;
        expect(Object.keys(state)).toEqual(TOPIC_INFO_KEYS[v]);
        expectBrokerError(await call("getEvent", { eventId: "not exist" }), 100302, "eventId is illegal");
        expectBrokerError(await call("open", ["x".repeat(65), ""]), 100102, "topic name exceeds max length[64 bytes]");
        const sent = expectReply(await call("publish", { topic: t, content: "aGVsbG8gd29ybGQ=" }), 200).result;
        expect(sent).toMatchObject({ status: "SUCCESS", topic: t });
        // v1.0's extensions are `weevent-` ones: not extensions unless BRAND=weevent (below).
        expectBrokerError(
          await call("publish", { topic: t, groupId: "1", content: "aGVsbG8gd29ybGQ=", extensions: { "weevent-url": "https://x" } }),
          100206,
          "event extensions key not startwith event-",
        );
      }
    });

    it("a gzip-encoded body is read, whatever its Content-Type", async () => {
      const body = gzipSync(javaClientBody("exist", [`${t}.gz`, "1"]));
      const r = await rawCall(base, {
        method: "POST",
        path: `${CONTEXT.M}/jsonrpc`,
        headers: { "content-type": "text/plain", "content-encoding": "gzip" },
        body,
      });
      expect(expectReply(r, 200).result).toBe(false);
    });

    it("the unknown-path answer no longer reaches a client: M and E answer JSON-RPC at /jsonrpc, trailing slash and all", async () => {
      for (const v of ALL_VARIANTS) {
        for (const path of [`${CONTEXT[v]}/jsonrpc`, `${CONTEXT[v]}/jsonrpc/`]) {
          const r = await rawCall(base, { method: "POST", path, body: javaClientBody("exist", ["t", "1"]) });
          expect(expectReply(r, 200).result).toBe(false);
          expect(r.text).not.toContain("200203");
        }
      }
    });
  });

  describe("the standard errors, GET and other methods", () => {
    const post = (body: string, v: Variant = "L") => rawCall(base, { method: "POST", path: `${CONTEXT[v]}/jsonrpc`, body });
    it("parse error, invalid request, unknown method and bad params, with the original's HTTP statuses", async () => {
      expect(expectReply(await post("{"), 400)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "JSON parse error" } });
      expect(expectReply(await post('{"id":1,"method":7}'), 400)).toMatchObject({ id: 1, error: { code: -32600 } });
      expect(expectReply(await post("[]"), 400).error?.code).toBe(-32600);
      expect(expectReply(await post('"x"'), 400).error?.code).toBe(-32600);
      for (const m of ["subscribe", "unSubscribe", "setProducer", "toString"]) {
        expect(expectReply(await post(javaClientBody(m, ["t"])), 404).error?.code, m).toBe(-32601);
      }
      expect(expectReply(await post('{"id":"p","jsonrpc":"2.0","method":"open","params":{"topic":"t","x":1}}'), 500)).toMatchObject({
        id: "p",
        error: { code: -32602 },
      });
      expect(expectReply(await post('{"id":"q","method":"open"}'), 500).error?.code).toBe(-32602);
      const batch = await post('[{"id":1,"method":"exist","params":["t"]}, 5, {"id":2,"method":"nope","params":[]}]');
      expect(batch.status).toBe(500);
      expect((batch.json as { id: unknown; error?: { code: number } }[]).map((r) => [r.id, r.error?.code])).toEqual([
        [1, undefined],
        [null, -32600],
        [2, -32601],
      ]);
    });

    it("GET names a call by method, id and params (JSON or its Base64); nothing named is an empty 400; PUT is 405", async () => {
      const get = (q: string) => rawCall(base, { path: `${CONTEXT.M}/jsonrpc${q}` });
      const params = encodeURIComponent(JSON.stringify(["t"]));
      expect(expectReply(await get(`?method=exist&id=7&params=${params}`), 200)).toEqual({ jsonrpc: "2.0", id: 7, result: false });
      const b = encodeURIComponent(b64('{"topic":"t"}'));
      expect(expectReply(await get(`?method=exist&id=a&params=${b}`), 200)).toEqual({ jsonrpc: "2.0", id: "a", result: false });
      expect(expectReply(await get("?method=exist&id=8"), 500).error?.code).toBe(-32602);
      const empty = await get("");
      expect([empty.status, empty.text]).toEqual([400, ""]);
      const put = await rawCall(base, { method: "PUT", path: `${CONTEXT.M}/jsonrpc`, body: "{}" });
      expect(put.status).toBe(405);
      expect((put as CallResult & { headers: Record<string, string> }).headers.allow).toBe("GET, POST");
    });
  });

  describe("hostile callers", () => {
    const post = (body: string) => rawCall(base, { method: "POST", path: `${CONTEXT.L}/jsonrpc`, body, timeoutMs: 5_000 });
    /** `body` posted while /health is asked on another connection: both answer within the hang bound. */
    async function withHealthAlongside(body: string): Promise<CallResult> {
      const hostile = post(body);
      const health = await rawCall(base, { path: "/health", timeoutMs: 5_000 });
      expect(health.status).toBe(200);
      return hostile;
    }

    it("a batch of 10,000 calls is refused as a whole before any runs", async () => {
      const t = uniqueTopic("hostile.batch");
      const calls = Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "open", params: [`${t}.${i}`] }));
      const r = await withHealthAlongside(JSON.stringify(calls));
      expect(expectReply(r, 400).error?.message).toMatch(/more than 100 calls/);
      expect(expectReply(await post(javaClientBody("exist", [`${t}.0`])), 200).result).toBe(false);
    });

    it("deep JSON, a body over the limit, and ids that cannot be echoed are refused; a long string id is echoed", async () => {
      const deep = await withHealthAlongside(`{"id":1,"method":"open","params":${"[".repeat(500_000)}`);
      expect(expectReply(deep, 400).error?.message).toMatch(/deeper than 32 levels/);
      const large = await withHealthAlongside(`{"id":1,"method":"open","params":["${"x".repeat(1_100_000)}"]}`);
      expect(expectReply(large, 400).error?.message).toMatch(/larger than 1048576 bytes/);
      for (const id of ["1e400", "18446744073709551616"]) {
        expect(expectReply(await post(`{"id":${id},"method":"exist","params":["t"]}`), 400)).toMatchObject({
          id: null,
          error: { code: -32600 },
        });
      }
      const longId = "i".repeat(100_000);
      expect(expectReply(await post(JSON.stringify({ id: longId, method: "exist", params: ["t"] })), 200)).toEqual({
        jsonrpc: "2.0",
        id: longId,
        result: false,
      });
    });

    it("a flood of notification batches is answered, each after its calls ran, and the gateway stays well", async () => {
      const body = JSON.stringify(Array.from({ length: 100 }, () => ({ method: "exist", params: ["flood"] })));
      const answers = await Promise.all(Array.from({ length: 30 }, () => post(body)));
      for (const a of answers) expect([a.status, a.text]).toEqual([200, ""]);
      expect((await rawCall(base, { path: "/health" })).status).toBe(200);
    });
  });

  describe("with API keys (and BRAND=weevent)", () => {
    let keyed: string;
    const keys: Record<string, string> = {};
    beforeAll(async () => {
      keyed = await sys.addGateway("gateway-keys", { API_KEYS: "true", API_KEY_CACHE_MS: "300", BRAND: "weevent" });
      const pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 1));
      const store = new ApiKeyStore(pool);
      const make = async (name: string, roles: ApiRole[], rate: number | null, burst: number | null) => {
        const k = await createKey(store, { name, roles, groups: ["1"], publishRate: rate, publishBurst: burst });
        keys[name] = k.key;
      };
      await make("reader", ["read"], null, null);
      await make("publisher", ["publish", "read"], 0.01, 2);
      await pool.end();
    });
    const as = (name: string | null, body: string) =>
      javaClientCall(keyed, CONTEXT.M, body, name === null ? {} : { authorization: `Bearer ${keys[name]}` });

    it("no key is HTTP 401 before the body is read; a call outside the key's role or groups is -32003 (HTTP 403)", async () => {
      expect((await as(null, javaClientBody("exist", ["t", "1"]))).status).toBe(401);
      expect(expectReply(await as("reader", javaClientBody("exist", ["t", "1"])), 200).result).toBe(false);
      const refused = expectReply(await as("reader", javaClientBody("open", [topic, "1"])), 403);
      expect(refused.error).toEqual({ code: -32003, message: "not allowed" });
      // Outside the key's groups: refused before the operation would answer its unknown group.
      expect(expectReply(await as("reader", javaClientBody("exist", [topic, "2"])), 403).error?.code).toBe(-32003);
      const lib = libraryClient(`${keyed}${CONTEXT.L}/jsonrpc`, { authorization: `Bearer ${keys.reader}` });
      expect((await rpcError(lib.client.request("publish", [topic, "1", b64("no"), {}]))).code).toBe(-32003);
    });

    it("each publish of a batch counts against the key's rate: past its burst -32029; broker errors name the original's class", async () => {
      const t = `${topic}.keyed`;
      expect(expectReply(await as("publisher", javaClientBody("open", [t, "1"])), 200).result).toBe(true);
      const publish = (i: number) => ({
        id: i,
        jsonrpc: "2.0",
        method: "publish",
        params: { topic: t, content: b64(`n${i}`), extensions: { "weevent-url": "https://x" } },
      });
      const r = await as("publisher", JSON.stringify([publish(1), publish(2), publish(3)]));
      expect(r.status).toBe(500);
      const replies = r.json as { id: number; result?: { status: string }; error?: { code: number } }[];
      expect(replies.map((x) => x.id)).toEqual([1, 2, 3]);
      // The bucket holds two: two of the three are published, one refused.
      expect(replies.map((x) => x.result?.status ?? x.error?.code).sort()).toEqual([-32029, "SUCCESS", "SUCCESS"]);
      // Under BRAND=weevent the original's `weevent-` keys are the extensions, and the error's class is the original's.
      const { client } = libraryClient(`${keyed}${CONTEXT.M}/jsonrpc`, { authorization: `Bearer ${keys.reader}` });
      const missing = await rpcError(client.request("state", [`${t}.missing`, "1"]));
      expect(missing.data).toEqual({ exceptionTypeName: "com.webank.weevent.sdk.BrokerException", message: "topic not exist" });
    });
  });
});
