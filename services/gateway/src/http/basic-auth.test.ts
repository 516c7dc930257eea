import { timingSafeEqual } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { basicAuthenticator, parseBasicUsers } from "./basic-auth.ts";

const header = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("Basic authentication", () => {
  it("accepts the configured users and nothing else", () => {
    const check = basicAuthenticator(new Map([["ops", "s3cr:et"]]));
    expect(check(header("ops", "s3cr:et"))).toBe("ops");
    expect(check(header("ops", "wrong"))).toBeNull();
    expect(check(header("nobody", "s3cr:et"))).toBeNull();
    expect(check(undefined)).toBeNull();
    expect(check("Bearer x")).toBeNull();
  });

  it("an unknown Basic-auth user answers faster than a known one: every check compares a digest in constant time", () => {
    // The timing difference came from skipping the comparison for an unknown user. The same
    // work is now done on every path: one constant-time comparison of two 32-byte digests.
    const compare = vi.fn((a: Buffer, b: Buffer) => timingSafeEqual(a, b));
    const check = basicAuthenticator(new Map([["ops", "s3cret"]]), compare);
    for (const h of [header("ops", "s3cret"), header("ops", "wrong"), header("nobody", "s3cret"), header("", "x"), "Basic !!", undefined]) {
      compare.mockClear();
      check(h);
      expect(compare, String(h)).toHaveBeenCalledTimes(1);
      const [a, b] = compare.mock.calls[0] as [Buffer, Buffer];
      expect([a.length, b.length]).toEqual([32, 32]);
    }
  });

  it("does not put a password into the error for a malformed entry", () => {
    expect(() => parseBasicUsers("ops:fine,s3cretwithoutuser")).toThrow("entry 2 is not user:password");
    expect(() => parseBasicUsers("s3cretwithoutuser")).not.toThrow(/s3cret/);
  });
});
