import { describe, expect, it } from "vitest";
import { classifyHttpStatus, classifyNetworkError, isDeliveredStatus, suspendsAtOnce } from "./http-failure.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("callback failures: answers", () => {
  it("counts only 2xx as delivered", () => {
    for (const s of [200, 201, 204, 299]) expect(isDeliveredStatus(s)).toBe(true);
    for (const s of [100, 199, 300, 302, 400, 410, 429, 500, 503]) expect(isDeliveredStatus(s)).toBe(false);
  });

  it.each([
    { status: 301, want: "REDIRECT" },
    { status: 307, want: "REDIRECT" },
    { status: 400, want: "CLIENT_ERROR" },
    { status: 404, want: "CLIENT_ERROR" },
    { status: 410, want: "GONE" },
    { status: 429, want: "THROTTLED" },
    { status: 500, want: "SERVER_ERROR" },
    { status: 503, want: "SERVER_ERROR" },
    { status: 599, want: "SERVER_ERROR" },
    { status: 199, want: "OTHER" },
    { status: 600, want: "OTHER" },
  ])("HTTP $status: $want", ({ status, want }) => {
    expect(classifyHttpStatus(status)).toBe(want);
  });

  it("suspends at once only for 410 Gone", () => {
    expect(suspendsAtOnce("GONE")).toBe(true);
    for (const k of ["THROTTLED", "SERVER_ERROR", "CLIENT_ERROR", "TIMEOUT", "REFUSED", "TLS"] as const)
      expect(suspendsAtOnce(k)).toBe(false);
  });
});

describe("callback failures: no answer", () => {
  it.each([
    { name: "connect timed out", err: withCode("connect ETIMEDOUT 10.0.0.1:80", "ETIMEDOUT"), want: "TIMEOUT" },
    { name: "no such host", err: withCode("getaddrinfo ENOTFOUND x.invalid", "ENOTFOUND"), want: "DNS" },
    { name: "resolver failing for now", err: withCode("getaddrinfo EAI_AGAIN x.example", "EAI_AGAIN"), want: "DNS" },
    { name: "nothing listening", err: withCode("connect ECONNREFUSED 127.0.0.1:9", "ECONNREFUSED"), want: "REFUSED" },
    { name: "socket hang up", err: withCode("socket hang up", "ECONNRESET"), want: "RESET" },
    { name: "broken pipe", err: withCode("write EPIPE", "EPIPE"), want: "RESET" },
    { name: "no route", err: withCode("connect EHOSTUNREACH 10.9.9.9:443", "EHOSTUNREACH"), want: "UNREACHABLE" },
    { name: "network down", err: withCode("connect ENETUNREACH", "ENETUNREACH"), want: "UNREACHABLE" },
    { name: "self-signed certificate", err: withCode("self-signed certificate", "DEPTH_ZERO_SELF_SIGNED_CERT"), want: "TLS" },
    { name: "expired certificate", err: withCode("certificate has expired", "CERT_HAS_EXPIRED"), want: "TLS" },
    { name: "wrong host name", err: withCode("Hostname/IP does not match", "ERR_TLS_CERT_ALTNAME_INVALID"), want: "TLS" },
    { name: "protocol mismatch", err: withCode("wrong version number", "ERR_SSL_WRONG_VERSION_NUMBER"), want: "TLS" },
    { name: "unknown code", err: withCode("something else", "EWHATEVER"), want: "OTHER" },
    { name: "no code: the message is not read", err: new Error("ECONNREFUSED timed out socket hang up"), want: "OTHER" },
    { name: "not an error", err: "ECONNREFUSED", want: "OTHER" },
    { name: "null", err: null, want: "OTHER" },
  ])("$name: $want", ({ err, want }) => {
    expect(classifyNetworkError(err)).toBe(want);
  });
});
