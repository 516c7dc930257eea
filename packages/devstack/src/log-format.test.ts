import { describe, expect, it } from "vitest";
import { escapeControls, formatLogLine } from "./log-format.ts";

const FORGED = "a\n[stack] gateway-1 exited with code 1\r\x1b[2J\x1b]0;owned\x07\u2028\u202e";

function pinoLine(fields: Record<string, unknown>): string {
  return JSON.stringify({ level: 30, time: 0, pid: 1, hostname: "h", service: "gateway", ...fields });
}

/** Whether `text` holds anything a terminal acts on: a C0/C1 control, a line separator or a bidi control. */
function hasControls(text: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the point of the check
  return /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/.test(text);
}

describe("formatLogLine", () => {
  it("escapes a will topic that forges a [stack] line and carries ANSI escapes (issue 28)", () => {
    const out = formatLogLine(pinoLine({ msg: "will published", topic: FORGED }));
    expect(hasControls(out)).toBe(false);
    expect(out.split("\n")).toHaveLength(1);
    expect(out).toContain("topic=a\\n[stack] gateway-1 exited with code 1\\r\\x1b[2J\\x1b]0;owned\\x07\\u2028\\u202e");
  });

  it("escapes the message, field names and nested values alike", () => {
    const out = formatLogLine(pinoLine({ msg: `bad ${FORGED}`, "k\x1b": { headers: { "user-agent": "x\u2029\x9b" } } }));
    expect(hasControls(out)).toBe(false);
    expect(out).toContain("bad a\\n[stack]");
    expect(out).toContain("k\\x1b=");
    expect(out).toContain("x\\u2029\\x9b");
  });

  it("escapes lines that are not JSON too", () => {
    expect(formatLogLine("plain \x1b[31mred\x1b[0m\tend")).toBe("plain \\x1b[31mred\\x1b[0m\\tend");
    expect(formatLogLine("{not json \x1b")).toBe("{not json \\x1b");
  });

  it("leaves printable text alone", () => {
    const out = formatLogLine(pinoLine({ msg: "published", topic: "a/b ünïcødé 🚀", count: 2 }));
    expect(out.endsWith("INFO  published topic=a/b ünïcødé 🚀 count=2")).toBe(true);
  });
});

describe("escapeControls", () => {
  it("writes each control as a visible escape", () => {
    expect(escapeControls("\0\x7f\u0085\u2066")).toBe("\\x00\\x7f\\x85\\u2066");
  });
});
