import { describe, expect, it } from "vitest";
import { formatLocalTimestamp, holdsNul, isBlank, isJavaWhitespace, javaSplit, parseJavaInteger, replaceNul } from "./text.ts";

describe("isJavaWhitespace (Character.isWhitespace)", () => {
  const whitespace = [
    ...[0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x1680],
    ...[0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2008, 0x2009, 0x200a],
    ...[0x2028, 0x2029, 0x205f, 0x3000],
  ];

  it("is true for exactly the documented code points in the BMP", () => {
    const found: number[] = [];
    for (let c = 0; c <= 0xffff; c++) if (isJavaWhitespace(c)) found.push(c);
    expect(found).toEqual(whitespace);
  });

  it("excludes the no-break spaces", () => {
    for (const c of [0x00a0, 0x2007, 0x202f]) expect(isJavaWhitespace(c)).toBe(false);
  });
});

describe("isBlank", () => {
  it.each([
    ["", true],
    [" \t\n", true],
    ["\u3000\u205f", true],
    ["\u00a0", false],
    ["\u200b", false],
    [" a ", false],
  ])("%j → %s", (s, blank) => {
    expect(isBlank(s)).toBe(blank);
  });

  it("agrees with isJavaWhitespace on every code unit of the BMP", () => {
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      expect(isBlank(`${ch} `), c.toString(16)).toBe(isJavaWhitespace(c));
    }
  });
});

describe("javaSplit (String.split with a literal separator)", () => {
  it.each([
    ["abcdefgh-1-2", ["abcdefgh", "1", "2"]],
    ["abcdefgh-1-", ["abcdefgh", "1"]],
    ["abcdefgh-1-2-", ["abcdefgh", "1", "2"]],
    ["abcdefgh-1-2--", ["abcdefgh", "1", "2"]],
    ["-a", ["", "a"]],
    ["a--b", ["a", "", "b"]],
    ["---", []],
    ["abc", ["abc"]],
  ])("%j → %j", (s, parts) => {
    expect(javaSplit(s, "-")).toEqual(parts);
  });
});

describe("formatLocalTimestamp", () => {
  it("writes yyyy-MM-dd HH:mm:ss in local time", () => {
    const d = new Date(2024, 4, 4, 7, 8, 9);
    expect(formatLocalTimestamp(d.getTime())).toBe("2024-05-04 07:08:09");
  });
});

describe("parseJavaInteger", () => {
  it("reads signs and decimal digits of any script, like Java's parseInt/parseLong", () => {
    expect(parseJavaInteger("007")).toBe(7n);
    expect(parseJavaInteger("+5")).toBe(5n);
    expect(parseJavaInteger("-12")).toBe(-12n);
    expect(parseJavaInteger("\u0661\u0662")).toBe(12n); // Arabic-Indic ١٢
    expect(parseJavaInteger("\u0967\u0966")).toBe(10n); // Devanagari १०
    expect(parseJavaInteger("\u{1D7D9}")).toBe(1n); // mathematical double-struck 𝟙 (second run of ten)
  });

  it("refuses what Java refuses", () => {
    for (const s of ["", "+", "-", "1.0", "1e3", "0x10", " 1", "1 ", "١a", "--1"]) expect(parseJavaInteger(s), s).toBeNull();
  });
});

describe("holdsNul and replaceNul (Postgres text cannot hold U+0000)", () => {
  it.each([
    ["", false],
    ["abc", false],
    ["\u0000", true],
    ["a\u0000b", true],
    ["\u2400", false],
    ["\\0", false],
  ])("holdsNul(%j) → %s", (s, held) => {
    expect(holdsNul(s)).toBe(held);
  });

  it("replaceNul puts U+FFFD in place of every U+0000 and leaves other text as it is", () => {
    expect(replaceNul("a\u0000b\u0000")).toBe("a\uFFFDb\uFFFD");
    expect(replaceNul("plain")).toBe("plain");
    expect(holdsNul(replaceNul("\u0000\u0000"))).toBe(false);
  });
});
