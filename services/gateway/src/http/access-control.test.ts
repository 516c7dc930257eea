import type { NextFunction, Request, Response } from "express";
import { describe, expect, it } from "vitest";
import { parseCidrList, silentLogger } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import { getEventOperation } from "../events/get-event-operation.ts";
import { publishOperation } from "../events/publish-operation.ts";
import { topicOperations } from "../topics/topic-operations.ts";
import { accessControl } from "./access-control.ts";
import type { ApiKeyVerifier } from "./api-key-verifier.ts";
import { Params } from "./params.ts";
import type { PublishRateLimiter, RateDecision } from "./publish-rate-limit.ts";

const KEY: ApiKeyRecord = {
  id: "0123456789ab",
  name: "t",
  roles: ["publish"],
  groups: ["1"],
  publishRate: 1,
  publishBurst: 1,
  createdAt: 0,
  revokedAt: null,
};

interface Sent {
  status: number;
  headers: Record<string, unknown>;
  body: string;
  next: boolean;
}

function fakeExchange(headers: Record<string, string>, ip = "127.0.0.1") {
  const sent: Sent = { status: 0, headers: {}, body: "", next: false };
  const req = { headers, ip, socket: { remoteAddress: ip } } as unknown as Request;
  const res = {
    set statusCode(s: number) {
      sent.status = s;
    },
    status(s: number) {
      sent.status = s;
      return res;
    },
    set(k: string, v: unknown) {
      sent.headers[k.toLowerCase()] = v;
      return res;
    },
    setHeader(k: string, v: unknown) {
      sent.headers[k.toLowerCase()] = v;
    },
    end(b?: Buffer) {
      sent.body = b ? b.toString() : "";
    },
  } as unknown as Response;
  const next: NextFunction = () => {
    sent.next = true;
  };
  return { req, res, next, sent };
}

function guard(opts: { verify?: () => Promise<ApiKeyRecord | null>; take?: () => Promise<RateDecision>; allowed?: string }) {
  return accessControl({
    allowed: parseCidrList(opts.allowed ?? ""),
    basicUsers: new Map(),
    keys: {
      verifier: { verify: opts.verify ?? (async () => KEY) } as unknown as ApiKeyVerifier,
      limiter: { take: opts.take ?? (async () => ({ ok: true })) } as unknown as PublishRateLimiter,
    },
    logger: silentLogger,
  });
}

// The operations as registered, each with the access it declares (building them touches none of their dependencies).
const none = {} as never;
const OPS = new Map([...topicOperations(none), publishOperation(none), getEventOperation(none)].map((o) => [o.path, o]));
const op = (path: string) => {
  const found = OPS.get(path);
  if (!found) throw new Error(`no operation ${path}`);
  return found;
};

const settle = () => new Promise((r) => setImmediate(r));

describe("access control with API keys", () => {
  it("passes a live key on and refuses a missing one with the JSON 401", async () => {
    const ac = guard({});
    const ok = fakeExchange({ authorization: "Bearer k" });
    ac.authenticate(ok.req, ok.res, ok.next);
    await settle();
    expect(ok.sent.next).toBe(true);
    const none = fakeExchange({});
    ac.authenticate(none.req, none.res, none.next);
    await settle();
    expect(none.sent).toMatchObject({ status: 401, next: false, headers: { "www-authenticate": 'Bearer realm="event-broker"' } });
    expect(JSON.parse(none.sent.body)).toMatchObject({ status: 401 });
  });

  it("answers 503 when the key cannot be looked up, without the failure's text", async () => {
    const ac = guard({ verify: async () => Promise.reject(new Error("connect ECONNREFUSED postgres://u:pw@db")) });
    const x = fakeExchange({ authorization: "Bearer k" });
    ac.authenticate(x.req, x.res, x.next);
    await settle();
    expect(x.sent.status).toBe(503);
    expect(x.sent.body).not.toContain("pw");
  });

  it("refuses a forwarded address that is no IP when an allow-list is on", async () => {
    const ac = guard({ allowed: "10.0.0.0/8" });
    const x = fakeExchange({ authorization: "Bearer k" }, "127.evil.example");
    ac.authenticate(x.req, x.res, x.next);
    await settle();
    expect(x.sent).toMatchObject({ status: 403, next: false, body: "" });
  });

  it("authorizes by role and group, and answers 429 with Retry-After past the key's rate", async () => {
    const ac = guard({ take: async () => ({ ok: false, retryAfterMs: 1500 }) });
    const x = fakeExchange({ authorization: "Bearer k" });
    ac.authenticate(x.req, x.res, x.next);
    await settle();
    const params = (p: Record<string, string>) => new Params(new Map(Object.entries(p).map(([k, v]) => [k, [v]])), "M");
    expect(await ac.authorize(x.req, x.res, op("rest/open"), params({ topic: "t" }))).toBe(true);
    expect(await ac.authorize(x.req, x.res, op("rest/getEvent"), params({}))).toBe(false);
    expect(x.sent.status).toBe(403);
    expect(await ac.authorize(x.req, x.res, op("rest/publish"), params({ groupId: "2" }))).toBe(false);
    expect(x.sent.status).toBe(403);
    expect(await ac.authorize(x.req, x.res, op("rest/publish"), params({}))).toBe(false);
    expect(x.sent).toMatchObject({ status: 429, headers: { "retry-after": "2" } });
  });
});
