import { createHmac, timingSafeEqual } from "node:crypto";

const SECRET_PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Default receiver tolerance between the signed timestamp and its own clock, in seconds. */
export const WEBHOOK_TOLERANCE_SEC = 300;

/**
 * Secrets are "whsec_<base64 key>" (the key is the base64-decoded part) or, for convenience, any
 * other string used as raw UTF-8 bytes. Throws on an empty secret, and on a "whsec_" secret whose
 * rest is not base64 (a copy-paste error would otherwise sign with garbage the receiver never
 * accepts). Error messages never contain the secret.
 */
export function parseSigningSecret(secret: string): Buffer {
  if (secret === "") throw new Error("Webhook signing secret is empty: set it to whsec_<base64 key> or a non-empty string");
  if (!secret.startsWith(SECRET_PREFIX)) return Buffer.from(secret, "utf8");
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) {
    throw new Error("Webhook signing secret starts with whsec_ but the rest is not padded standard base64");
  }
  return Buffer.from(encoded, "base64");
}

/** The body as signed and sent: text (UTF-8) or bytes (the raw body mode's content as published). */
export type WebhookBody = string | Uint8Array;

function signature(key: Buffer, id: string, timestampSec: number, body: WebhookBody): Buffer {
  const mac = createHmac("sha256", key).update(`${id}.${timestampSec}.`, "utf8");
  return (typeof body === "string" ? mac.update(body, "utf8") : mac.update(body)).digest();
}

/**
 * The `webhook-signature` header value: for each key, "v1," + base64(HMAC-SHA256(key,
 * `${id}.${timestampSec}.${body}`)), space-separated, in the order given (new key first during
 * rotation). Throws when there is no key or the timestamp is not a whole number of seconds, since
 * receivers would reject such a delivery every time.
 */
export function signWebhook(opts: { id: string; timestampSec: number; body: WebhookBody; keys: readonly Buffer[] }): string {
  if (opts.keys.length === 0) throw new Error("signWebhook needs at least one key");
  if (!Number.isSafeInteger(opts.timestampSec)) throw new Error(`webhook timestamp must be whole seconds, got ${opts.timestampSec}`);
  return opts.keys.map((key) => `v1,${signature(key, opts.id, opts.timestampSec, opts.body).toString("base64")}`).join(" ");
}

/**
 * Receiver-side check (for documentation examples and tests): true when any v1 signature in the
 * header matches any key and |now - timestamp| <= toleranceSec (default 300). Constant-time
 * comparison. Other versions ("v1a,…") and malformed parts are skipped, as the scheme requires.
 */
export function verifyWebhook(opts: {
  id: string;
  timestampSec: number;
  body: string;
  header: string;
  keys: readonly Buffer[];
  nowSec: number;
  toleranceSec?: number;
}): boolean {
  const tolerance = opts.toleranceSec ?? WEBHOOK_TOLERANCE_SEC;
  if (!Number.isSafeInteger(opts.timestampSec) || !(Math.abs(opts.nowSec - opts.timestampSec) <= tolerance)) return false;
  const offered: Buffer[] = [];
  for (const part of opts.header.split(" ")) {
    const comma = part.indexOf(",");
    if (comma < 0 || part.slice(0, comma) !== "v1") continue;
    const encoded = part.slice(comma + 1);
    if (BASE64.test(encoded)) offered.push(Buffer.from(encoded, "base64"));
  }
  let ok = false;
  for (const key of opts.keys) {
    const expected = signature(key, opts.id, opts.timestampSec, opts.body);
    // Every pair is compared (no early exit) so timing does not reveal which one matched.
    for (const candidate of offered) {
      if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) ok = true;
    }
  }
  return ok;
}
