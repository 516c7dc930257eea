import { createHmac, timingSafeEqual } from "node:crypto";
import type { CallbackBody } from "./types.ts";

export type HeaderSource = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookOptions {
  /**
   * The signing secret(s) the broker was given (`WEBHOOK_SECRETS`): `whsec_<base64 key>`, or any
   * other string used as raw UTF-8 key bytes. Several during a key rotation; any one may match.
   */
  secret: string | readonly string[];
  /** The request headers: `webhook-id`, `webhook-timestamp`, `webhook-signature` (any case). */
  headers: HeaderSource;
  /** The raw request body, exactly as received (before any JSON parsing). */
  body: string | Uint8Array;
  /** Accepted distance between the signed timestamp and now, seconds. Default 300. */
  toleranceSec?: number;
  /** Now, seconds since the epoch (tests); default the clock. */
  nowSec?: number;
}

export type VerifyWebhookResult = { ok: true; id: string; timestampSec: number; payload: CallbackBody } | { ok: false; reason: string };

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return typeof v === "string" ? v : v?.[0];
  }
  return undefined;
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith("whsec_")) return Buffer.from(secret, "utf8");
  const encoded = secret.slice("whsec_".length);
  if (!BASE64.test(encoded)) throw new Error("secret starts with whsec_ but the rest is not base64");
  return Buffer.from(encoded, "base64");
}

/**
 * Checks a callback the broker signed (Standard Webhooks, v1 = HMAC-SHA256 over
 * `<webhook-id>.<webhook-timestamp>.<body>`): the timestamp must be within `toleranceSec` of now
 * (a replayed old request fails) and one `v1,` signature must match one secret, compared in
 * constant time. Returns the parsed body when it does; never throws for a bad request.
 */
export function verifyWebhook(opts: VerifyWebhookOptions): VerifyWebhookResult {
  const id = header(opts.headers, "webhook-id");
  const ts = header(opts.headers, "webhook-timestamp");
  const sigs = header(opts.headers, "webhook-signature");
  if (!id || !ts || !sigs) return { ok: false, reason: "webhook-id, webhook-timestamp or webhook-signature header missing" };
  if (!/^\d+$/.test(ts)) return { ok: false, reason: "webhook-timestamp is not whole seconds" };
  const timestampSec = Number(ts);
  const nowSec = opts.nowSec ?? Math.floor(Date.now() / 1000);
  if (Math.abs(nowSec - timestampSec) > (opts.toleranceSec ?? 300)) return { ok: false, reason: "webhook-timestamp too far from now" };
  const secrets = typeof opts.secret === "string" ? [opts.secret] : opts.secret;
  let keys: Buffer[];
  try {
    keys = secrets.map(keyOf);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  const body = typeof opts.body === "string" ? Buffer.from(opts.body, "utf8") : Buffer.from(opts.body);
  const offered = sigs
    .split(" ")
    .filter((p) => p.startsWith("v1,") && BASE64.test(p.slice(3)))
    .map((p) => Buffer.from(p.slice(3), "base64"));
  let match = false;
  for (const key of keys) {
    const expected = createHmac("sha256", key).update(`${id}.${ts}.`, "utf8").update(body).digest();
    // No early exit: the time taken does not tell which pair matched.
    for (const given of offered) if (given.length === expected.length && timingSafeEqual(given, expected)) match = true;
  }
  if (!match) return { ok: false, reason: "no signature matches the secret" };
  let payload: CallbackBody;
  try {
    payload = JSON.parse(body.toString("utf8")) as CallbackBody;
  } catch {
    return { ok: false, reason: "signed body is not JSON" };
  }
  return { ok: true, id, timestampSec, payload };
}
