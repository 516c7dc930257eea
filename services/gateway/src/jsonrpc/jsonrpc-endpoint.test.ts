import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrokerError, type Mount, silentLogger, Spelling } from "@evb/domain";
import type { AccessControl } from "../http/access-control.ts";
import { buildApp } from "../http/app.ts";
import type { Operation, OperationAccess } from "../http/operation.ts";
import { bare, data } from "../http/replies.ts";

const MOUNTS: Mount[] = [
  { variant: "L", path: "/event-broker" },
  { variant: "E", path: "/event-e" },
];

/** What the fake operations were called with, in order of their start. */
const seen: { path: string; variant: string; params: Record<string, string[]>; extensions?: unknown }[] = [];
let refusal: string | null = null;

function op(path: string, handle: Operation["handle"], extra: Partial<Operation> = {}): Operation {
  return {
    path,
    kind: "rest",
    variants: ["L", "E"],
    async handle(ctx) {
      seen.push({ path, variant: ctx.variant, params: Object.fromEntries(ctx.params.raw), extensions: ctx.params.extensions });
      return handle(ctx);
    },
    ...extra,
  };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OPERATIONS: Operation[] = [
  // A slow first call and a fast second one: a batch's replies still come in the calls' order.
  op("rest/exist", async (ctx) => {
    if (ctx.params.optional("topic") === "slow") await wait(30);
    return data(ctx.params.optional("topic") !== "none");
  }),
  op("rest/state", async () => {
    throw new BrokerError(100101, "topic not exist");
  }),
  op(
    "rest/open",
    async () => {
      throw new Error("connection refused 10.0.0.7:5432");
    },
    { role: "publish", failureCode: () => "TRANSACTION_FAILED" },
  ),
  op("rest/list", async () => {
    throw new Error("a bug");
  }),
  op("rest/publish", async (ctx) => bare({ status: "SUCCESS", topic: ctx.params.first("topic"), eventId: "e-1-1" }), {
    role: "publish",
    rateLimited: true,
  }),
];

/** Access with keys, faked: publish is rate-limited for the topic `limited`'s group 2, open forbidden. */
const access: AccessControl = {
  authenticate: (_req, _res, next) => next(),
  authorize: async () => true,
  checks: {
    required: true,
    admits: () => true,
    authorization: async () => ({ ok: true, key: null }),
    async permits(_key, o: OperationAccess, groupId) {
      if (o.role === "publish" && o.rateLimited !== true) return "forbidden";
      if (o.rateLimited === true && groupId === "2") return { retryAfterMs: 2500 };
      return "ok";
    },
  },
};

describe("the JSON-RPC endpoint in front of the operations", () => {
  let base: string;
  let server: Server;
  beforeAll(async () => {
    const app = buildApp({
      mounts: MOUNTS,
      operations: OPERATIONS,
      logger: silentLogger,
      bodyLimitBytes: 65_536,
      trustedProxies: [],
      access,
      ledgerRefusal: () => refusal,
      spelling: new Spelling("weevent"),
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = async (body: unknown, path = "/event-broker/jsonrpc") => {
    const res = await fetch(`${base}${path}`, { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, text, json: text === "" ? undefined : JSON.parse(text), retryAfter: res.headers.get("retry-after") };
  };

  it("runs the operation of the method's name with its parameters, in the mount's variant", async () => {
    seen.length = 0;
    expect((await post({ jsonrpc: "2.0", id: 1, method: "exist", params: ["t", "1"] }, "/event-e/jsonrpc")).json).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: true,
    });
    const sent = await post({ id: 2, method: "publish", params: { topic: "t", content: "aGk=", extensions: { "weevent-a": "b" } } });
    expect(sent.json).toEqual({ jsonrpc: "2.0", id: 2, result: { status: "SUCCESS", topic: "t", eventId: "e-1-1" } });
    expect(seen).toEqual([
      { path: "rest/exist", variant: "E", params: { topic: ["t"], groupId: ["1"] }, extensions: undefined },
      { path: "rest/publish", variant: "L", params: { topic: ["t"], content: ["hi"] }, extensions: { "weevent-a": "b" } },
    ]);
  });

  it("answers a batch in the calls' order, whatever order they finish in, and runs its notifications", async () => {
    seen.length = 0;
    const r = await post([
      { id: "a", method: "exist", params: ["slow"] },
      { method: "exist", params: ["notified"] },
      { id: "b", method: "exist", params: ["none"] },
    ]);
    expect(r.json).toEqual([
      { jsonrpc: "2.0", id: "a", result: true },
      { jsonrpc: "2.0", id: "b", result: false },
    ]);
    expect(r.status).toBe(200);
    expect(seen.map((s) => s.params.topic?.[0]).sort()).toEqual(["none", "notified", "slow"]);
  });

  it("a broker error in the shape of every release, under BRAND's class name; an unexpected failure as the REST path answers it", async () => {
    expect((await post({ id: 3, method: "state", params: ["t"] })).json).toEqual({
      jsonrpc: "2.0",
      id: 3,
      error: {
        code: 100101,
        message: "topic not exist",
        data: { exceptionTypeName: "com.webank.weevent.sdk.BrokerException", message: "topic not exist" },
      },
    });
    // No detail of the failure reaches the caller: the documented code, or the generic one with the request id.
    const bug = (await post({ id: 4, method: "list", params: [0, 10] })).json as { error: { code: number; message: string } };
    expect(bug.error.code).toBe(200000);
    expect(bug.error.message).toMatch(/^service unavailable \(request id \w+; the gateway log has the detail\)$/);
    const e = (await post({ id: 5, method: "list", params: [0, 10] }, "/event-e/jsonrpc")).json as { error: { code: number } };
    expect(e.error.code).toBe(200203);
  });

  it("checks each call against the key: -32003 outside its role, -32029 with Retry-After past its rate", async () => {
    seen.length = 0;
    const forbidden = await post({ id: 6, method: "open", params: ["t"] });
    expect([forbidden.status, forbidden.json]).toEqual([403, { jsonrpc: "2.0", id: 6, error: { code: -32003, message: "not allowed" } }]);
    const limited = await post({ id: 7, method: "publish", params: ["t", "2", "aGk="] });
    expect([limited.status, limited.retryAfter, (limited.json as { error: { code: number } }).error.code]).toEqual([429, "3", -32029]);
    expect(seen).toEqual([]);
  });

  it("any JSON (calls of every method with arbitrary params, and anything else) gets a JSON-RPC answer of a documented code", async () => {
    const CODES = new Set([-32700, -32600, -32601, -32602, -32003, -32029, 100101, 200000, 200202]);
    const method = fc.constantFrom("open", "close", "exist", "state", "list", "getEvent", "publish", "subscribe", "");
    const call = fc.record(
      {
        jsonrpc: fc.constantFrom("2.0", "1.0"),
        id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        method,
        params: fc.jsonValue(),
      },
      { requiredKeys: ["method"] },
    );
    const body = fc.oneof(call, fc.array(fc.oneof(call, fc.jsonValue()), { minLength: 1, maxLength: 8 }), fc.jsonValue());
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const r = await post(b);
        if (r.text === "") {
          expect(r.status).toBe(200);
          return;
        }
        const replies = Array.isArray(r.json) ? r.json : [r.json];
        for (const reply of replies as { jsonrpc: string; result?: unknown; error?: { code: number; message: unknown } }[]) {
          expect(reply.jsonrpc).toBe("2.0");
          if (reply.error) {
            expect(CODES.has(reply.error.code), JSON.stringify(reply)).toBe(true);
            expect(typeof reply.error.message).toBe("string");
          } else {
            expect(Object.hasOwn(reply, "result")).toBe(true);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it("while the ledger is refused every call answers its operation's code with the reason", async () => {
    refusal = "the ledger in Postgres is another one";
    try {
      const r = (await post({ id: 8, method: "exist", params: ["t"] })).json as { error: { code: number; message: string } };
      expect(r.error).toMatchObject({ code: 200000, message: "the ledger is not available: the ledger in Postgres is another one" });
    } finally {
      refusal = null;
    }
  });
});
