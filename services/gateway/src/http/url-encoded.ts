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
 * The next position of one byte value at or after a point that only moves forward, found with
 * the native Buffer.indexOf and kept until the point passes it: the total search over a whole body
 * is linear however many times it is asked (a fresh search per pair would rescan the rest of the
 * body for every pair that lacks the byte).
 */
class NextByte {
  private at = -2;
  private readonly bytes: Buffer;
  private readonly value: number;

  constructor(bytes: Buffer, value: number) {
    this.bytes = bytes;
    this.value = value;
  }

  /** The first position ≥ `from` holding the byte, or the buffer's length. */
  from(from: number): number {
    if (this.at < from && this.at !== this.bytes.length) {
      const found = this.bytes.indexOf(this.value, from);
      this.at = found < 0 ? this.bytes.length : found;
    }
    return this.at;
  }
}

/**
 * Form-urlencoded decoding of bytes [start, end) of `bytes` (behaviour.md 1.2): `+` is a space,
 * `%XX` is the byte XX, a malformed escape such as `%zz` or a lone `%` stays as written, and the
 * bytes are then read as UTF-8 (an invalid sequence becomes U+FFFD). One pass over bytes into a
 * scratch buffer: a string `replaceAll("+", " ")` over a 1 MiB value of `+` held the event loop
 * for up to 1.3 s.
 */
function decodeBytes(bytes: Buffer, start: number, end: number, scratch: Buffer): string {
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
 * parameter). Every search is native and linear over the whole body (NextByte); most components
 * have neither `+` nor `%` and are read as they are.
 */
export function parseUrlEncoded(bytes: Buffer, into: ParamCollector): void {
  const amps = new NextByte(bytes, AMPERSAND);
  const equals = new NextByte(bytes, EQUALS);
  const pluses = new NextByte(bytes, PLUS);
  const percents = new NextByte(bytes, PERCENT);
  // A decoded component is never longer than its encoding: one scratch buffer serves them all.
  let scratch: Buffer | undefined;
  const decode = (from: number, to: number) => {
    if (pluses.from(from) >= to && percents.from(from) >= to) return bytes.toString("utf8", from, to);
    scratch ??= Buffer.allocUnsafe(bytes.length);
    return decodeBytes(bytes, from, to, scratch);
  };
  let start = 0;
  while (start <= bytes.length) {
    const amp = amps.from(start);
    const eq = equals.from(start);
    const nameEnd = Math.min(eq, amp);
    if (nameEnd > start) into.add(decode(start, nameEnd), eq < amp ? decode(eq + 1, amp) : "");
    start = amp + 1;
  }
}

/** parseUrlEncoded over a query string as Node gives it (one latin1 character per byte: llhttp refuses other bytes in a URL). */
export function parseQueryString(query: string, into: ParamCollector): void {
  parseUrlEncoded(Buffer.from(query, "latin1"), into);
}
