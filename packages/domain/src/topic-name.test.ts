import { describe, expect, it } from "vitest";
import { checkTopicName, isPattern } from "./topic-name.ts";

const codeOf = (topic: string) => checkTopicName(topic)?.code ?? "ok";

describe("checkTopicName (behaviour.md 5.1)", () => {
  it.each([
    ["a".repeat(64), "ok"],
    ["a".repeat(65), 100102],
    ["中".repeat(70), 100102],
    ["中国", 100106],
    ["a\u001fb", 100106],
    ["a\u0000", 100106],
    ["a+b", 100106],
    ["a#b", 100106],
    ["+", 100106],
    ["#", 100106],
    ["a/b/", 100106],
    ["/", 100106],
    ["/a", "ok"],
    ["a//b", "ok"],
    ["a b", "ok"],
    [" leading-space", "ok"],
    ["del\u007f", "ok"],
    ["c128\u0080", "ok"],
    ["c129\u0081", 100106],
    ["nbsp\u00a0", 100106],
    ["   ", 100103],
    ["", 100103],
    ["\t\n\u000b\f\r", 100103],
    ["\u3000\u2028", 100103],
  ])("%j → %s", (topic, expected) => {
    expect(codeOf(topic)).toBe(expected);
  });

  it("checks blank before length: 70 spaces are blank, not too long", () => {
    expect(codeOf(" ".repeat(70))).toBe(100103);
  });

  it("checks length before characters: 65 characters with a + are too long", () => {
    expect(codeOf(`${"a".repeat(64)}+`)).toBe(100102);
  });

  it("counts UTF-16 code units: 32 astral characters (64 units) pass the length check and fail on characters", () => {
    expect(codeOf("😀".repeat(32))).toBe(100106);
    expect(codeOf(`${"😀".repeat(32)}a`)).toBe(100102);
  });

  it("answers the exact wire messages", () => {
    expect(checkTopicName("")?.wireMessage).toBe("topic name is blank");
    expect(checkTopicName("a".repeat(65))?.wireMessage).toBe("topic name exceeds max length[64 bytes]");
    expect(checkTopicName("a#")?.wireMessage).toBe("topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)");
  });
});

describe("isPattern", () => {
  it("is true only for names with a wildcard character", () => {
    expect(isPattern("com/+")).toBe(true);
    expect(isPattern("#")).toBe(true);
    expect(isPattern("com/event")).toBe(false);
  });
});
