import type { ParamCollector } from "./param-collector.ts";

const PLUS = 0x2b;
const PERCENT = 0x25;
const AMPERSAND = 0x26;
const EQUALS = 0x3d;

/** The value of one hex digit byte, or -1. */
function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  return -1;
}

/**
 * Form-urlencoded decoding of bytes [start, end) of `bytes` (behaviour.md 1.2): `+` is a space,
 * `%XX` is the byte XX, a malformed escape such as `%zz` or a lone `%` stays as written, and the
 * bytes are then read as UTF-8 (an invalid sequence becomes U+FFFD). One pass over bytes into a
 * scratch buffer: a string `replaceAll("+", " ")` over a 1 MiB value of `+` held the event loop
 * for up to 1.3 s.
 */
function decodeComponent(bytes: Buffer, start: number, end: number, scratch: Buffer): string {
  let plain = true;
  for (let i = start; i < end; i++) {
    const b = bytes[i] as number;
    if (b === PLUS || b === PERCENT) {
      plain = false;
      break;
    }
  }
  if (plain) return bytes.toString("utf8", start, end);
  let n = 0;
  for (let i = start; i < end; i++) {
    const b = bytes[i] as number;
    if (b === PLUS) {
      scratch[n++] = 0x20;
    } else if (b === PERCENT && i + 2 < end) {
      const hi = hexValue(bytes[i + 1] as number);
      const lo = hi < 0 ? -1 : hexValue(bytes[i + 2] as number);
      if (lo < 0) {
        scratch[n++] = b;
      } else {
        scratch[n++] = hi * 16 + lo;
        i += 2;
      }
    } else {
      scratch[n++] = b;
    }
  }
  return scratch.toString("utf8", 0, n);
}

/**
 * Splits a query string or urlencoded body (its bytes) into name/value pairs in one pass: `&`
 * separates pairs, the first `=` separates name from value, a pair without `=` has the value "".
 * Empty pairs and pairs with an empty name are skipped (no operation reads a nameless
 * parameter). Each byte is looked at a bounded number of times, so the work is linear whatever
 * the repetition: the search for `=` never runs past the pair's own `&`.
 */
export function parseUrlEncoded(bytes: Buffer, into: ParamCollector): void {
  // A decoded component is never longer than its encoding: one scratch buffer serves them all.
  const scratch = Buffer.allocUnsafe(bytes.length);
  let start = 0;
  let eq = -1;
  for (let i = 0; i <= bytes.length; i++) {
    const b = i < bytes.length ? (bytes[i] as number) : AMPERSAND;
    if (b === EQUALS && eq < 0) {
      eq = i;
    } else if (b === AMPERSAND) {
      const nameEnd = eq < 0 ? i : eq;
      if (nameEnd > start) {
        const name = decodeComponent(bytes, start, nameEnd, scratch);
        into.add(name, eq < 0 ? "" : decodeComponent(bytes, eq + 1, i, scratch));
      }
      start = i + 1;
      eq = -1;
    }
  }
}

/** parseUrlEncoded over a query string as Node gives it (one latin1 character per byte: llhttp refuses other bytes in a URL). */
export function parseQueryString(query: string, into: ParamCollector): void {
  parseUrlEncoded(Buffer.from(query, "latin1"), into);
}
