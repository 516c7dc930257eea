import { BlockList, isIPv4 } from "node:net";
import type { NextFunction, Request, Response } from "express";
import { type Cidr, errorMessage, type Logger, parseCidrList } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import type { ApiKeyVerifier } from "./api-key-verifier.ts";
import { basicAuthenticator } from "./basic-auth.ts";
import { type Caller, callerAddress, isLoopbackAddress } from "./caller-address.ts";
import type { OperationAccess } from "./operation.ts";
import { keyPermits, operationGroup, requiredRole } from "./operation-roles.ts";
import type { Params } from "./params.ts";
import type { PublishRateLimiter } from "./publish-rate-limit.ts";
import { sendJson } from "./replies.ts";

export { parseBasicUsers } from "./basic-auth.ts";

export interface AccessControlOptions {
  /** Callers allowed besides loopback; empty = everyone (the original's default). */
  allowed: readonly Cidr[];
  /** user → password; empty = no Basic authentication (the original's default). */
  basicUsers: ReadonlyMap<string, string>;
  /** API keys (API_KEYS=true): every request needs a key or Basic credentials. */
  keys?: { verifier: ApiKeyVerifier; limiter: PublishRateLimiter };
  logger: Logger;
}

/** What guards every mount: `authenticate` before the body is read, `authorize` once the operation and its parameters are known. */
export interface AccessControl {
  authenticate(req: Request, res: Response, next: NextFunction): void;
  /** Answers 403 or 429 itself and returns false when the caller's key may not make this call of `op` (an Operation: its declared access). */
  authorize(
    req: Request,
    res: Response,
    op: OperationAccess & { rateWeight?: (params: Params) => number },
    params: Params,
  ): Promise<boolean>;
  /** The same checks for a way in other than HTTP (STOMP): see CallerChecks. */
  checks: CallerChecks;
}

/** Who presented credentials: an API key's record, or a Basic user (no key). */
type Credentials = { ok: true; key: ApiKeyRecord | null } | { ok: false; unavailable: boolean };

/**
 * The allow-list, credential and key checks on their own, for protocols whose caller is not an
 * HTTP request (STOMP's CONNECT carries login and passcode). One implementation serves both.
 */
export interface CallerChecks {
  /** Whether credentials are needed at all (API_BASIC_AUTH users or API_KEYS). */
  readonly required: boolean;
  /** Whether an address (as callerAddress gives it, null for none) passes API_ALLOWED_CIDRS. */
  admits(ip: string | null): boolean;
  /**
   * An `Authorization` header value (Bearer key or Basic): whose credentials they are, or refused.
   * `maxAgeMs`: how old the key verifier's cached answer may be (ApiKeyVerifier.verify).
   */
  authorization(value: string, maxAgeMs?: number): Promise<Credentials>;
  /** API_KEY_CACHE_MS with API keys on: the clock a session re-checks its key on (SessionKey); absent without keys. */
  readonly keyRecheckMs?: number;
  /**
   * Whether a key may call an operation declaring `op` in `groupId` (role, group, publish rate);
   * null: no key. `weight`: how many publishes the call counts (default 1; a batch: its events).
   */
  permits(
    key: ApiKeyRecord | null,
    op: OperationAccess,
    groupId: string | undefined,
    weight?: number,
  ): Promise<"ok" | "forbidden" | { retryAfterMs: number }>;
}

const PROXY_GROUPS = new Set(["loopback", "linklocal", "uniquelocal"]);

/**
 * TRUSTED_PROXIES: the proxies whose `X-Forwarded-For` names the caller, as addresses, CIDR
 * ranges or the names `loopback`, `linklocal`, `uniquelocal` (express's `trust proxy` list).
 * Any other direct caller's `X-Forwarded-For` is ignored, so it cannot claim another address.
 */
export function parseTrustedProxies(spec: string): string[] {
  const out: string[] = [];
  for (const raw of spec.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    if (PROXY_GROUPS.has(entry)) out.push(entry);
    else out.push(...parseCidrList(entry).map((c) => `${c.address}/${c.prefix}`));
  }
  return out;
}

/** The key each authenticated request came with (none: no keys, or a Basic user). */
const keyOf = new WeakMap<Request, ApiKeyRecord>();

/** The API key a request was authenticated with (after `authenticate`); null without one (no keys, a Basic user). */
export function keyRecordOf(req: Request): ApiKeyRecord | null {
  return keyOf.get(req) ?? null;
}

/** Who makes this request (after `authenticate`). */
export function callerOf(req: Request): Caller {
  return { address: callerAddress(req) ?? req.socket.remoteAddress ?? "", keyId: keyOf.get(req)?.id ?? null };
}

// Rejections say nothing about which part was wrong (unknown key, revoked key, wrong role, group).
const UNAUTHORIZED = { status: 401, error: "Unauthorized", message: "a valid API key or credentials are required" };
const FORBIDDEN = { status: 403, error: "Forbidden", message: "not allowed" };
const UNAVAILABLE = { status: 503, error: "Service Unavailable", message: "credentials could not be checked now; retry" };

/**
 * Access control in front of every mount (docs/security.md). The original's optional parts
 * (behaviour.md 1.6): an IP allow-list (a caller not on it gets HTTP 403 with an empty body;
 * loopback is always allowed; X-Forwarded-For from one of TRUSTED_PROXIES is honoured) and HTTP
 * Basic authentication (401). Beyond the original, API keys with roles and groups, sent as
 * `Authorization: Bearer <key>`: 401 without a live key, 403 for a call outside its roles or
 * groups, 429 over its publish rate. All off unless configured; /health is outside the mounts.
 */
export function accessControl(opts: AccessControlOptions): AccessControl {
  const checks = callerChecks(opts);
  const basic = opts.basicUsers.size > 0;
  const keys = opts.keys;

  const authenticate = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (!checks.admits(opts.allowed.length > 0 ? callerAddress(req) : null)) {
      res.status(403).end();
      return;
    }
    if (!checks.required) return next();
    const authorization = req.headers.authorization ?? "";
    const found = await checks.authorization(authorization);
    if (found.ok) {
      if (found.key) keyOf.set(req, found.key);
      return next();
    }
    if (found.unavailable) {
      sendJson(res, 503, UNAVAILABLE);
      return;
    }
    if (keys) {
      res.setHeader(
        "WWW-Authenticate",
        basic ? ['Bearer realm="event-broker"', 'Basic realm="event-broker", charset="UTF-8"'] : 'Bearer realm="event-broker"',
      );
      sendJson(res, 401, UNAUTHORIZED);
      return;
    }
    res.status(401).set("WWW-Authenticate", 'Basic realm="event-broker", charset="UTF-8"').end();
  };

  return {
    checks,
    authenticate(req, res, next) {
      authenticate(req, res, next).catch(next);
    },
    async authorize(req, res, op, params) {
      const key = keyOf.get(req) ?? null;
      const groupId = op.groupIdParam === "first" ? params.first("groupId") : params.optional("groupId");
      const verdict = await checks.permits(key, op, groupId, op.rateWeight?.(params) ?? 1);
      if (verdict === "ok") return true;
      if (verdict === "forbidden") {
        sendJson(res, 403, FORBIDDEN);
        return false;
      }
      res.setHeader("Retry-After", String(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))));
      sendJson(res, 429, { status: 429, error: "Too Many Requests", message: "publish rate limit of this key reached; retry later" });
      return false;
    },
  };
}

/** The checks behind accessControl, free of HTTP (see CallerChecks). */
function callerChecks(opts: AccessControlOptions): CallerChecks {
  const list = new BlockList();
  for (const c of opts.allowed) list.addSubnet(c.address, c.prefix, c.family);
  const basic = opts.basicUsers.size > 0 ? basicAuthenticator(opts.basicUsers) : null;
  const keys = opts.keys;
  return {
    required: basic !== null || keys !== undefined,
    // A forwarded value that is no IP address (`127.evil.example`) is nobody's: refused.
    admits: (ip) => opts.allowed.length === 0 || (ip !== null && (isLoopbackAddress(ip) || list.check(ip, isIPv4(ip) ? "ipv4" : "ipv6"))),
    ...(keys ? { keyRecheckMs: keys.verifier.cacheMs } : {}),
    async authorization(authorization, maxAgeMs) {
      const bearer = /^Bearer +(\S+) *$/i.exec(authorization);
      if (keys && bearer) {
        try {
          const key = await keys.verifier.verify(bearer[1] as string, maxAgeMs);
          if (key) return { ok: true, key };
        } catch (err) {
          opts.logger.warn({ err: errorMessage(err) }, "API key lookup failed");
          return { ok: false, unavailable: true };
        }
      } else if (basic && basic(authorization) !== null) {
        return { ok: true, key: null };
      }
      return { ok: false, unavailable: false };
    },
    async permits(key, op, groupId, weight = 1) {
      if (!key || !keys) return "ok";
      if (!keyPermits(key, requiredRole(op), operationGroup(op, groupId))) return "forbidden";
      if (op.rateLimited === true && key.publishRate !== null) {
        const burst = key.publishBurst ?? Math.max(1, Math.ceil(key.publishRate));
        const r = await keys.limiter.take(key.id, key.publishRate, burst, weight);
        if (!r.ok) return { retryAfterMs: r.retryAfterMs };
      }
      return "ok";
    },
  };
}
