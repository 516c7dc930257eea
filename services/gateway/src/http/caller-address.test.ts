import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { callerAddress, isLoopbackAddress, ownerId } from "./caller-address.ts";

const req = (ip: string | undefined) => ({ ip }) as Request;

describe("caller address", () => {
  it("an X-Forwarded-For value such as 127.evil.example counted as loopback: text is no address", () => {
    expect(callerAddress(req("127.evil.example"))).toBeNull();
    expect(callerAddress(req("127.0.0.1.evil"))).toBeNull();
    expect(callerAddress(req(""))).toBeNull();
    expect(callerAddress(req(undefined))).toBeNull();
  });

  it("gives IPv4-mapped addresses in IPv4 form", () => {
    expect(callerAddress(req("::ffff:10.1.2.3"))).toBe("10.1.2.3");
    expect(callerAddress(req("2001:db8::1"))).toBe("2001:db8::1");
  });

  it("knows loopback addresses", () => {
    for (const ip of ["127.0.0.1", "127.9.9.9", "::1", "0:0:0:0:0:0:0:1"]) expect(isLoopbackAddress(ip), ip).toBe(true);
    for (const ip of ["10.0.0.1", "::2", "1.127.0.0", "127.evil.example"]) expect(isLoopbackAddress(ip), ip).toBe(false);
  });

  it("owners are the key when there is one, else the address", () => {
    expect(ownerId({ address: "10.0.0.1", keyId: null })).toBe("10.0.0.1");
    expect(ownerId({ address: "10.0.0.1", keyId: "0123456789ab" })).toBe("key:0123456789ab");
  });
});
