import { describe, expect, it } from "vitest";
import { EXCERPT_BYTES, excerptOf } from "./delivery-attempt-store.ts";

describe("answer excerpt", () => {
  it("is null for an empty body and the text of a short one", () => {
    expect(excerptOf(Buffer.alloc(0))).toBeNull();
    expect(excerptOf(Buffer.from('{"ok":true}'))).toBe('{"ok":true}');
  });
  it("keeps at most 256 bytes, never cutting a character in two", () => {
    const long = excerptOf(Buffer.from("é".repeat(300))) as string;
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(long).toBe("é".repeat(128));
    const odd = excerptOf(Buffer.from(`x${"é".repeat(300)}`)) as string;
    expect(Buffer.byteLength(odd)).toBeLessThanOrEqual(EXCERPT_BYTES);
    expect(odd.endsWith("é")).toBe(true);
  });
});
