/**
 * The W3C Trace Context `traceparent` value (https://www.w3.org/TR/trace-context/), pure: how a
 * span's context is written into a Kafka record header, a ledger row and a callback's HTTP
 * header, and read back. Version 00 only is written; a later version is read by its first four
 * fields, as the spec asks.
 */

/** The header's name, in a Kafka record and in HTTP alike. */
export const TRACEPARENT = "traceparent";

/** What a traceparent carries: the trace, the parent span, and whether the trace is sampled. */
export interface TraceParent {
  /** 32 lower-case hex digits, not all zero. */
  traceId: string;
  /** 16 lower-case hex digits, not all zero. */
  spanId: string;
  /** Bit 0: sampled. */
  traceFlags: number;
}

const SHAPE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/** `00-<traceId>-<spanId>-<flags>`. */
export function formatTraceparent(p: TraceParent): string {
  return `00-${p.traceId}-${p.spanId}-${(p.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The parts of a traceparent; undefined for anything the spec says to ignore (bad shape, zero ids, version ff). */
export function parseTraceparent(value: string | null | undefined): TraceParent | undefined {
  if (!value) return undefined;
  const m = SHAPE.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string | undefined];
  // Version 00 has exactly four fields; ff is forbidden; a later version may append more.
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** A Kafka record's header as the client reads it: name and value bytes (either may be null). */
type HeaderEntry = readonly [Buffer | string | null, Buffer | string | null];

const NAME = Buffer.from(TRACEPARENT);

/** The traceparent of a Kafka record's headers, if it carries a valid one. */
export function traceparentOfHeaders(headers: Iterable<HeaderEntry> | undefined): string | undefined {
  if (!headers) return undefined;
  for (const [name, value] of headers) {
    if (name === null || value === null) continue;
    const matches = typeof name === "string" ? name === TRACEPARENT : NAME.equals(name);
    if (!matches) continue;
    const text = typeof value === "string" ? value : value.toString("latin1");
    return parseTraceparent(text) ? text : undefined;
  }
  return undefined;
}

/** The Kafka record headers that carry `traceparent` (the client takes header names as bytes too). */
export function traceparentHeaders(traceparent: string): Map<Buffer, Buffer> {
  return new Map([[NAME, Buffer.from(traceparent, "latin1")]]);
}
