import { describe, expect, it } from "vitest";
import { checkContent, checkExtensions, renderedExtensionsLength } from "./event-content.ts";

/** The original's rendering (Java's AbstractMap.toString), to check the formula against. */
const render = (ext: Record<string, string>) =>
  `{${Object.entries(ext)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ")}}`;

describe("checkContent (behaviour.md 7.2)", () => {
  it.each([
    ["", 100200],
    [" ", 100200],
    ["\t\r\n", 100200],
    ["\u3000", 100200],
    ["\u00a0", "ok"],
    ["hello", "ok"],
  ])("%j → %s", (content, expected) => {
    expect(checkContent(content)?.code ?? "ok").toBe(expected);
  });

  it("accepts 10240 code units and rejects 10241", () => {
    expect(checkContent("x".repeat(10240))).toBeNull();
    expect(checkContent("x".repeat(10241))?.code).toBe(100201);
    expect(checkContent("x".repeat(10241))?.wireMessage).toBe("event content exceeds max length[10k bytes]");
  });

  it("counts UTF-16 code units, not bytes: 10240 Chinese characters pass, 5121 emoji (10242 units) fail", () => {
    expect(checkContent("中".repeat(10240))).toBeNull();
    expect(checkContent("😀".repeat(5120))).toBeNull();
    expect(checkContent("😀".repeat(5121))?.code).toBe(100201);
  });

  it("checks blank before length: 10241 spaces are blank", () => {
    expect(checkContent(" ".repeat(10241))?.code).toBe(100200);
  });
});

describe("extensions length (behaviour.md 7.2)", () => {
  it.each([
    [{}],
    [{ "event-a": "b" }],
    [{ "event-format": "json", "event-tag": "" }],
    [{ "event-1": "x", "event-2": "yy", "event-3": "中文" }],
  ])("formula equals the rendered length of %j", (ext) => {
    expect(renderedExtensionsLength(ext)).toBe(render(ext).length);
  });

  it("accepts a rendering of exactly 1024 and rejects 1025", () => {
    // {event-a=<v>} is 2 + 7 + 1 + len(v) long.
    const at = { "event-a": "v".repeat(1024 - 10) };
    expect(render(at).length).toBe(1024);
    expect(checkExtensions(at)).toBeNull();
    const over = { "event-a": "v".repeat(1024 - 9) };
    expect(checkExtensions(over)?.code).toBe(100204);
    expect(checkExtensions(over)?.wireMessage).toBe("event extensions exceeds max length[1k bytes]");
  });

  it("counts the ', ' separators between entries", () => {
    // Two entries: 2 + (7+1+a) + (7+1+b) + 2 = 20 + a + b.
    const ext = { "event-a": "x".repeat(500), "event-b": "y".repeat(504) };
    expect(renderedExtensionsLength(ext)).toBe(1024);
    expect(checkExtensions(ext)).toBeNull();
    expect(checkExtensions({ ...ext, "event-b": "y".repeat(505) })?.code).toBe(100204);
  });
});
