import { describe, expect, it } from "vitest";
import { isLoopbackHost, openAccessProblem } from "./open-access-guard.ts";

const base = {
  HOST: "0.0.0.0",
  API_KEYS: false,
  API_BASIC_AUTH: new Map<string, string>(),
  API_ALLOWED_CIDRS: [],
  ALLOW_OPEN_ACCESS: false,
};

describe("a gateway open to the network", () => {
  it("is refused with the fix named when nothing guards it", () => {
    expect(openAccessProblem(base)).toMatch(/HOST=0\.0\.0\.0 is not loopback.*API_KEYS=true.*ALLOW_OPEN_ACCESS=true/);
    expect(openAccessProblem({ ...base, HOST: "::" })).not.toBeNull();
    expect(openAccessProblem({ ...base, HOST: "gateway-1" })).not.toBeNull();
  });

  it("starts with keys, Basic users, an allow-list, on purpose, or on loopback", () => {
    expect(openAccessProblem({ ...base, API_KEYS: true })).toBeNull();
    expect(openAccessProblem({ ...base, API_BASIC_AUTH: new Map([["ops", "x"]]) })).toBeNull();
    expect(openAccessProblem({ ...base, API_ALLOWED_CIDRS: [{}] })).toBeNull();
    expect(openAccessProblem({ ...base, ALLOW_OPEN_ACCESS: true })).toBeNull();
    expect(openAccessProblem({ ...base, HOST: "127.0.0.1" })).toBeNull();
  });

  it("knows loopback hosts", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"]) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "127.evil.example", "localhost.example"]) expect(isLoopbackHost(h), h).toBe(false);
  });
});
