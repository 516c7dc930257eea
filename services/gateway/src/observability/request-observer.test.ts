import { describe, expect, it } from "vitest";
import type { Mount } from "@evb/domain";
import { requestIdOf, resultOf, routeOf } from "./request-observer.ts";

const mounts: Mount[] = [
  { variant: "L", path: "/event-broker" },
  { variant: "M", path: "/event-m" },
];
const known = new Map([
  ["L", new Set(["rest/publish", "admin/getVersion"])],
  ["M", new Set(["rest/publish", "rest/subscribe"])],
]);

describe("request id", () => {
  it("takes a sane X-Request-Id as it is", () => {
    expect(requestIdOf("req-42.a_b:c")).toBe("req-42.a_b:c");
  });
  it("replaces an absent, overlong or unsafe X-Request-Id with a fresh one", () => {
    for (const bad of [undefined, "", "x".repeat(129), "a b", "line\nbreak", "<script>", "é"]) {
      const id = requestIdOf(bad);
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe("result label", () => {
  it("is the broker code of an envelope or error", () => {
    expect(resultOf(200, '{"code":0,"message":"success","data":true}')).toBe("0");
    expect(resultOf(200, '{"code":100101,"message":"topic name is blank"}')).toBe("100101");
    expect(resultOf(200, '{"code":-1,"message":"pageIndex error."}')).toBe("-1");
  });
  it("is the status of a publish answer", () => {
    expect(resultOf(200, '{"status":"SUCCESS","topic":"t","eventId":"x"}')).toBe("SUCCESS");
    expect(resultOf(200, '{"status":"TIMEOUT","topic":"t","eventId":null}')).toBe("TIMEOUT");
  });
  it("is http_<status> for an answer that is not 200, and 0 for bare data", () => {
    expect(resultOf(404, '{"timestamp":"…","status":404}')).toBe("http_404");
    expect(resultOf(200, "true")).toBe("0");
    expect(resultOf(200, "4cf7f4cc-aaaa")).toBe("0");
  });
});

describe("route labels", () => {
  it("name the variant and the operation a path reaches", () => {
    expect(routeOf("/event-m/rest/publish", mounts, known)).toEqual({ variant: "M", operation: "rest/publish" });
    expect(routeOf("/event-broker/admin/getVersion/;jsessionid=1", mounts, known)).toEqual({ variant: "L", operation: "admin/getVersion" });
  });
  it("labels every mount's JSON-RPC endpoint jsonrpc, trailing slash and all", () => {
    expect(routeOf("/event-m/jsonrpc", mounts, known)).toEqual({ variant: "M", operation: "jsonrpc" });
    expect(routeOf("/event-broker/jsonrpc/", mounts, known)).toEqual({ variant: "L", operation: "jsonrpc" });
  });
  it("label any path that names no operation unknown, so a scan cannot grow the series", () => {
    expect(routeOf("/event-m/rest/nope-123", mounts, known)).toEqual({ variant: "M", operation: "unknown" });
    expect(routeOf("/event-broker/rest/subscribe", mounts, known)).toEqual({ variant: "L", operation: "unknown" });
    expect(routeOf("/wp-admin/x", mounts, known)).toEqual({ variant: "none", operation: "unknown" });
    expect(routeOf("/metrics", mounts, known)).toEqual({ variant: "none", operation: "metrics" });
  });
});
