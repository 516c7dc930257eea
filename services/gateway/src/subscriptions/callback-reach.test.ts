import { describe, expect, it } from "vitest";
import { reachError, reachMode } from "./callback-reach.ts";

const code = (e: { code: number } | null) => e?.code ?? null;

describe("subscribe's check of the callback URL", () => {
  it("reads verify: absent is the original's check; true, false (any case, padded); anything else 100516", () => {
    expect(reachMode(undefined)).toBe("legacy");
    expect(reachMode("true")).toBe("verify");
    expect(reachMode(" FALSE ")).toBe("policy-only");
    for (const bad of ["", "0", "no", "yes"]) expect(() => reachMode(bad)).toThrow(expect.objectContaining({ code: 100516 }));
  });

  it("without verify, refused and unreachable are both 100502, as the original answered", () => {
    expect(code(reachError("legacy", "refused"))).toBe(100502);
    expect(code(reachError("legacy", "unreachable"))).toBe(100502);
    expect(reachError("legacy", "reached")).toBeNull();
  });

  it("with verify, a refused address is 100515; verify=true still needs the receiver, verify=false does not", () => {
    expect(code(reachError("verify", "refused"))).toBe(100515);
    expect(code(reachError("policy-only", "refused"))).toBe(100515);
    expect(code(reachError("verify", "unreachable"))).toBe(100502);
    expect(reachError("policy-only", "unreachable")).toBeNull();
    expect(reachError("verify", "reached")).toBeNull();
    expect(reachError("policy-only", "reached")).toBeNull();
  });
});
