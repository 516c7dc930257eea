import { describe, expect, it } from "vitest";
import { formatTraceparent, parseTraceparent, traceparentHeaders, traceparentOfHeaders } from "./traceparent.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";
const VALUE = `00-${TRACE}-${SPAN}-01`;

describe("traceparent", () => {
  it("formats and parses back the same context", () => {
    const p = { traceId: TRACE, spanId: SPAN, traceFlags: 1 };
    expect(formatTraceparent(p)).toBe(VALUE);
    expect(parseTraceparent(formatTraceparent(p))).toEqual(p);
    expect(formatTraceparent({ ...p, traceFlags: 0 })).toBe(`00-${TRACE}-${SPAN}-00`);
  });

  it("ignores values the spec says to ignore", () => {
    for (const bad of [
      undefined,
      "",
      "garbage",
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE}-${SPAN}`,
    ]) {
      expect(parseTraceparent(bad), String(bad)).toBeUndefined();
    }
  });

  it("reads a later version by its first four fields", () => {
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-more`)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
  });

  it("carries a traceparent through Kafka record headers and finds it among others", () => {
    const written = [...traceparentHeaders(VALUE)];
    const read: [Buffer | null, Buffer | null][] = [[Buffer.from("other"), Buffer.from("x")], [null, null], ...written];
    expect(traceparentOfHeaders(read)).toBe(VALUE);
    expect(traceparentOfHeaders([["traceparent", VALUE]])).toBe(VALUE);
  });

  it("finds nothing in records without one, or with a malformed one", () => {
    expect(traceparentOfHeaders(undefined)).toBeUndefined();
    expect(traceparentOfHeaders([])).toBeUndefined();
    expect(traceparentOfHeaders([[Buffer.from("traceparent"), Buffer.from("nope")]])).toBeUndefined();
  });
});
