/**
 * A subscription's custom headers (docs/delivery.md, "Custom headers"), pure: sent with every
 * callback of it, set through admin/subscriptionSettings as a JSON object, stored sealed with
 * SECRETS_KEY like the signing secrets (they often carry a receiver's token), and shown by name
 * only. Names may not take over what the broker sends or what HTTP itself means.
 */

/** At most this many headers, this long a name and value, this many bytes of names and values in all. */
const HEADER_LIMITS = { count: 20, nameLength: 64, valueLength: 1024, totalBytes: 4096 } as const;

/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** Printable ASCII and tab: no CR, LF or NUL (no header injection), nothing a receiver decodes differently. */
const VALUE = /^[\t\x20-\x7e]*$/;

/** Hop-by-hop and framing headers, and those the broker sets itself. */
const RESERVED = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "expect",
  "user-agent",
  "traceparent",
  "tracestate",
]);
/** Prefixes of headers the broker or HTTP owns: the body's (content-*), the Standard Webhooks ones, the raw mode's metadata. */
const RESERVED_PREFIXES = ["content-", "webhook-", "evb-"];

/** Whether a (lower-case) name may be a custom header. */
export function isAllowedHeaderName(name: string): boolean {
  if (name.length === 0 || name.length > HEADER_LIMITS.nameLength || !TOKEN.test(name)) return false;
  return !RESERVED.has(name) && !RESERVED_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * The headers a `headers` parameter asks for: a JSON object of names to string values, names
 * lower-cased (HTTP names are case-insensitive; one name once). Null: not valid.
 */
export function parseCustomHeaders(raw: string): Record<string, string> | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const out: Record<string, string> = {};
  let bytes = 0;
  const entries = Object.entries(value);
  if (entries.length > HEADER_LIMITS.count) return null;
  for (const [given, v] of entries) {
    const name = given.toLowerCase();
    if (!isAllowedHeaderName(name) || Object.hasOwn(out, name)) return null;
    if (typeof v !== "string" || v.length > HEADER_LIMITS.valueLength || !VALUE.test(v)) return null;
    bytes += name.length + v.length;
    out[name] = v;
  }
  return bytes > HEADER_LIMITS.totalBytes ? null : out;
}

/** The headers as the settings keep them (JSON text; null: none) read back; anything else is none. */
export function customHeadersOf(stored: string | null): Record<string, string> {
  if (stored === null) return {};
  const parsed = parseCustomHeaders(stored);
  return parsed ?? {};
}

/** The names only, sorted: how every view shows them (values may be tokens). Null: none set. */
export function shownHeaderNames(stored: string | null): string[] | null {
  return stored === null ? null : Object.keys(customHeadersOf(stored)).sort();
}
