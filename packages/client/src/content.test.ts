import { describe, expect, it } from "vitest";
import { decodeContent, decodeContentBytes } from "./content.ts";

const b64 = (data: number[] | string) => (typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data)).toString("base64");

describe("decodeContent", () => {
  it("reads an event's Base64 content, or the Base64 string itself, as UTF-8", () => {
    const ev = { topic: "t", eventId: "x", content: b64("hello 世界 🚀") };
    expect(decodeContent(ev)).toBe("hello 世界 🚀");
    expect(decodeContent(ev.content)).toBe("hello 世界 🚀");
  });

  it("gives an empty string and no bytes for empty content", () => {
    expect(decodeContent({ content: "" })).toBe("");
    expect(decodeContentBytes("")).toEqual(new Uint8Array());
  });

  it("turns bytes that are not UTF-8 into U+FFFD instead of throwing, while the bytes stay exact", () => {
    const raw = [0x61, 0xff, 0xfe, 0x62, 0xc3, 0x00, 0x80];
    expect(decodeContent(b64(raw))).toBe("a\uFFFD\uFFFDb\uFFFD\u0000\uFFFD");
    expect([...decodeContentBytes({ content: b64(raw) })]).toEqual(raw);
  });

  it("keeps every byte value of a binary payload", () => {
    const all = Array.from({ length: 256 }, (_, i) => i);
    const bytes = decodeContentBytes(b64(all));
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect([...bytes]).toEqual(all);
  });

  it("refuses text that is not Base64 rather than inventing bytes", () => {
    expect(() => decodeContentBytes("not base64!")).toThrow();
    expect(() => decodeContent({ content: "%%%" })).toThrow();
  });
});
