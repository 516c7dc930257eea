import { describe, expect, it } from "vitest";
import { checkFilter, filterMatches, isWildcardFilter } from "./topic-filter.ts";

describe("MQTT topic filters", () => {
  it("`#` takes the parent level and everything below it (MQTT's rule, not the broker's M rule)", () => {
    expect(filterMatches("a/#", "a")).toBe(true);
    expect(filterMatches("a/#", "a/b/c")).toBe(true);
    expect(filterMatches("#", "x/y")).toBe(true);
    expect(filterMatches("a/#", "ab")).toBe(false);
  });

  it("`+` takes exactly one level, empty levels included, and combines with `#`", () => {
    expect(filterMatches("a/+", "a/b")).toBe(true);
    expect(filterMatches("a/+", "a/b/c")).toBe(false);
    expect(filterMatches("a/+", "a")).toBe(false);
    expect(filterMatches("+/+", "/x")).toBe(true);
    expect(filterMatches("+/b/#", "a/b/c/d")).toBe(true);
    expect(filterMatches("+/b/#", "a/c/d")).toBe(false);
  });

  it("a wildcard in the first level never takes a `$` topic; a plain filter is equality", () => {
    expect(filterMatches("#", "$sys/x")).toBe(false);
    expect(filterMatches("+/x", "$sys/x")).toBe(false);
    expect(filterMatches("$sys/#", "$sys/x")).toBe(true);
    expect(filterMatches("a/b", "a/b")).toBe(true);
    expect(isWildcardFilter("a/b")).toBe(false);
  });

  it("checks: `+` a whole level, `#` alone and last, names by the topic rules", () => {
    expect(checkFilter("a/+/#")).toBeNull();
    expect(checkFilter("#")).toBeNull();
    expect(checkFilter("a+/b")?.code).toBe(100109);
    expect(checkFilter("a/#/b")?.code).toBe(100109);
    expect(checkFilter("a/b#")?.code).toBe(100109);
    expect(checkFilter(`${"x".repeat(64)}/#`)?.code).toBe(100102);
    expect(checkFilter("a/\u0001/#")?.code).toBe(100106);
    expect(checkFilter("")?.code).toBe(100103);
    expect(checkFilter("a/b/")?.code).toBe(100106);
  });
});
