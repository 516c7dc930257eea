import { createHash, timingSafeEqual } from "node:crypto";
import { BlockList, isIPv4 } from "node:net";
import type { NextFunction, Request, Response } from "express";
import { type Cidr, parseCidrList } from "@evb/domain";

export interface AccessControlOptions {
  /** Callers allowed besides loopback; empty = everyone (the original's default). */
  allowed: readonly Cidr[];
  /** user → password; empty = no authentication (the original's default). */
  basicUsers: ReadonlyMap<string, string>;
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

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/**
 * The original's optional access control (behaviour.md 1.6): an IP allow-list (a caller not on
 * it gets HTTP 403 with an empty body; loopback is always allowed; X-Forwarded-For from one of
 * TRUSTED_PROXIES is honoured through express's `trust proxy`) and HTTP Basic authentication
 * (401). Both are off unless configured. The health endpoint is outside the mounts and stays open.
 */
export function accessControl(opts: AccessControlOptions) {
  const list = new BlockList();
  for (const c of opts.allowed) list.addSubnet(c.address, c.prefix, c.family);
  const users = new Map([...opts.basicUsers].map(([u, p]) => [u, digest(p)]));
  return (req: Request, res: Response, next: NextFunction): void => {
    if (opts.allowed.length > 0) {
      const ip = (req.ip ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "");
      const loopback = ip === "::1" || ip.startsWith("127.");
      const family = isIPv4(ip) ? "ipv4" : "ipv6";
      if (!loopback && !(ip && list.check(ip, family))) {
        res.status(403).end();
        return;
      }
    }
    if (users.size > 0) {
      const m = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(req.headers.authorization ?? "");
      const pair = m ? Buffer.from(m[1] as string, "base64").toString("utf8") : "";
      const sep = pair.indexOf(":");
      const expected = sep > 0 ? users.get(pair.slice(0, sep)) : undefined;
      if (!expected || !timingSafeEqual(expected, digest(pair.slice(sep + 1)))) {
        res.status(401).set("WWW-Authenticate", 'Basic realm="event-broker", charset="UTF-8"').end();
        return;
      }
    }
    next();
  };
}

/** Parses `user:password[,user:password…]`; the first ':' separates user from password. */
export function parseBasicUsers(spec: string): Map<string, string> {
  const users = new Map<string, string>();
  for (const entry of spec
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const sep = entry.indexOf(":");
    if (sep <= 0 || sep === entry.length - 1) throw new Error(`"${entry}" is not user:password`);
    users.set(entry.slice(0, sep), entry.slice(sep + 1));
  }
  return users;
}
