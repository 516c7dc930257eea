import { describe, expect, it } from "vitest";
import { customHeadersOf, isAllowedHeaderName, parseCustomHeaders, shownHeaderNames } from "./custom-headers.ts";

describe("custom headers", () => {
  it("take a JSON object of names to strings, names lower-cased", () => {
    expect(parseCustomHeaders('{"Authorization":"Bearer abc","X-Tenant":"t1"}')).toEqual({ authorization: "Bearer abc", "x-tenant": "t1" });
    expect(parseCustomHeaders("{}")).toEqual({});
  });

  it("refuse what is not an object of strings, a name twice, and values that could inject a header", () => {
    for (const bad of [
      "",
      "[]",
      "null",
      '"x"',
      "{",
      '{"a":1}',
      '{"a":null}',
      '{"A":"1","a":"2"}',
      '{"a":"x\\r\\nb: c"}',
      '{"a":"\\u0000"}',
      '{"a":"é"}',
    ])
      expect(parseCustomHeaders(bad), bad).toBeNull();
  });

  it("refuse hop-by-hop, host, framing and the broker's own names", () => {
    for (const name of [
      "connection",
      "transfer-encoding",
      "host",
      "Content-Type",
      "content-length",
      "webhook-signature",
      "webhook-id",
      "evb-topic",
      "user-agent",
      "traceparent",
      "te",
      "upgrade",
      "bad name",
      "a:b",
      "",
    ])
      expect(isAllowedHeaderName(name.toLowerCase()), name).toBe(false);
    for (const name of ["authorization", "x-api-key", "x-tenant", "cookie"]) expect(isAllowedHeaderName(name), name).toBe(true);
  });

  it("cap their number, their lengths and their total size", () => {
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, "v"]));
    expect(parseCustomHeaders(JSON.stringify(many))).toBeNull();
    expect(parseCustomHeaders(JSON.stringify({ [`x-${"a".repeat(63)}`]: "v" }))).toBeNull();
    expect(parseCustomHeaders(JSON.stringify({ a: "v".repeat(1025) }))).toBeNull();
    const big = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`x-h${i}`, "v".repeat(1000)]));
    expect(parseCustomHeaders(JSON.stringify(big))).toBeNull();
    expect(parseCustomHeaders(JSON.stringify({ a: "v".repeat(1024) }))).toEqual({ a: "v".repeat(1024) });
  });

  it("read back from the settings and shown by name only", () => {
    const stored = JSON.stringify({ "x-b": "2", authorization: "secret" });
    expect(customHeadersOf(stored)).toEqual({ "x-b": "2", authorization: "secret" });
    expect(customHeadersOf(null)).toEqual({});
    expect(shownHeaderNames(stored)).toEqual(["authorization", "x-b"]);
    expect(shownHeaderNames(null)).toBeNull();
  });
});
