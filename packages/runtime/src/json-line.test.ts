import { describe, expect, it } from "vitest";
import { escapeRawControls } from "./json-line.ts";

describe("escapeRawControls", () => {
  // Issue 28: pino's JSON escapes C0 controls only; C1 (CSI), line separators and bidi overrides came out raw.
  it("leaves no C1 control, line separator or bidi control raw, and the line is the same JSON value", () => {
    const fields = { msg: "will", topic: "a\u009b2J\u2028[stack] x\u202e\u2066\u007f", n: 1, nested: { "k\u0085": ["\u200f"] } };
    const line = `${JSON.stringify(fields)}\n`;
    const out = escapeRawControls(line);
    expect(out).not.toMatch(/[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(out).toContain("a\\u009b2J\\u2028[stack] x\\u202e\\u2066\\u007f");
    expect(JSON.parse(out)).toEqual(fields);
    expect(out.endsWith("\n")).toBe(true);
  });

  it("leaves every other character as it is", () => {
    const line = JSON.stringify({ msg: "publish ünï 🚀 \\n", topic: "a/b" });
    expect(escapeRawControls(line)).toBe(line);
  });
});
