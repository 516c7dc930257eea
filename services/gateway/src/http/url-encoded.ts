import { setImmediate as nextTurn } from "node:timers/promises";
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

/** Bytes NextByte looks at itself before it asks the native search: a call costs more than a short scan. */
const NEAR_BYTES = 16;

/**
 * The next position of one byte value at or after a point that only moves forward, kept until
 * the point passes it: the total search over a whole body is linear however many times it is
 * asked (a fresh search per pair would rescan the rest of the body for every pair that lacks the
 * byte). The first NEAR_BYTES are looked at in JavaScript, the rest with the native
 * Buffer.indexOf: a body of a million empty pairs (`&&&…`) cost a million native calls, 40 ms.
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
    const { bytes } = this;
    if (this.at >= from || this.at === bytes.length) return this.at;
    const near = Math.min(from + NEAR_BYTES, bytes.length);
    let i = from;
    while (i < near && bytes[i] !== this.value) i++;
    if (i === near && near < bytes.length) {
      const found = bytes.indexOf(this.value, near);
      i = found < 0 ? bytes.length : found;
    }
    this.at = i;
    return i;
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
 * Bytes of pairs one step reads (a pair that starts within them is read whole): 64 KiB of any
 * shape is a few ms at most, so a 1 MiB body of empty pairs, which held the loop 111–164 ms in one
 * go, is read in 16 turns.
 */
export const STEP_BYTES = 65_536;

/**
 * Splits a query string or urlencoded body (its bytes) into name/value pairs in one pass: `&`
 * separates pairs, the first `=` separates name from value, a pair without `=` has the value "".
 * Empty pairs and pairs with an empty name are skipped (no operation reads a nameless
 * parameter). Every search is linear over the whole body (NextByte); most components have
 * neither `+` nor `%` and are read as they are. `step()` reads the pairs that start within the
 * next `stepBytes`, so a caller can let the event loop turn between steps (readUrlEncoded).
 */
export class UrlEncodedSplitter {
  private readonly bytes: Buffer;
  private readonly into: ParamCollector;
  private readonly amps: NextByte;
  private readonly equals: NextByte;
  private readonly pluses: NextByte;
  private readonly percents: NextByte;
  // A decoded component is never longer than its encoding: one scratch buffer serves them all.
  private scratch: Buffer | undefined;
  /** Where the next pair starts; past the end once every pair is read. */
  private start = 0;

  constructor(bytes: Buffer, into: ParamCollector) {
    this.bytes = bytes;
    this.into = into;
    this.amps = new NextByte(bytes, AMPERSAND);
    this.equals = new NextByte(bytes, EQUALS);
    this.pluses = new NextByte(bytes, PLUS);
    this.percents = new NextByte(bytes, PERCENT);
  }

  /** Where the next pair starts (bytes read so far). */
  get position(): number {
    return this.start;
  }

  get done(): boolean {
    return this.start > this.bytes.length;
  }

  /** Reads the pairs that start within the next `stepBytes` bytes; true once every pair is read. */
  step(stepBytes = STEP_BYTES): boolean {
    const { bytes } = this;
    const stop = Math.min(this.start + stepBytes, bytes.length + 1);
    while (this.start < stop) {
      const start = this.start;
      const amp = this.amps.from(start);
      const eq = this.equals.from(start);
      const nameEnd = Math.min(eq, amp);
      if (nameEnd > start) this.into.add(this.decode(start, nameEnd), eq < amp ? this.decode(eq + 1, amp) : "");
      this.start = amp + 1;
    }
    return this.done;
  }

  private decode(from: number, to: number): string {
    const { bytes } = this;
    if (this.pluses.from(from) >= to && this.percents.from(from) >= to) return bytes.toString("utf8", from, to);
    this.scratch ??= Buffer.allocUnsafe(bytes.length);
    return decodeBytes(bytes, from, to, this.scratch);
  }
}

/** UrlEncodedSplitter in one go: for a query string, which llhttp keeps small, and for tests. */
export function parseUrlEncoded(bytes: Buffer, into: ParamCollector): void {
  new UrlEncodedSplitter(bytes, into).step(Number.POSITIVE_INFINITY);
}

/**
 * A form body's pairs, STEP_BYTES per turn of the event loop: a body of any shape within
 * BODY_LIMIT_BYTES holds the loop a few ms at a time, never its whole parse.
 */
export async function readUrlEncoded(bytes: Buffer, into: ParamCollector): Promise<void> {
  const splitter = new UrlEncodedSplitter(bytes, into);
  while (!splitter.step()) await nextTurn();
}

/** parseUrlEncoded over a query string as Node gives it (one latin1 character per byte: llhttp refuses other bytes in a URL). */
export function parseQueryString(query: string, into: ParamCollector): void {
  parseUrlEncoded(Buffer.from(query, "latin1"), into);
}
