import { describe, expect, it } from "vitest";
import type { BrokerError } from "@evb/domain";
import { parseTime, patternPrefix, planEventSearch, SEARCH_WINDOW } from "./event-search.ts";

const code = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as BrokerError).code;
  }
  return null;
};

describe("planEventSearch", () => {
  it("refuses a search no index bounds: no topic, no eventId and not both ends of a time range (100308)", () => {
    expect(code(() => planEventSearch({ pageNumber: null, pageSize: null }))).toBe(100308);
    expect(code(() => planEventSearch({ from: "1000", pageNumber: null, pageSize: null }))).toBe(100308);
    expect(planEventSearch({ from: "1000", to: "2000", pageNumber: null, pageSize: null })).toMatchObject({ fromMs: 1000, toMs: 2000 });
  });

  it("takes a plain topic, or a pattern with the literal prefix its topics share", () => {
    expect(planEventSearch({ topic: "orders", pageNumber: 2, pageSize: 5 })).toMatchObject({
      topic: { kind: "plain", name: "orders" },
      pageNumber: 2,
      pageSize: 5,
    });
    expect(planEventSearch({ topic: "shop/+/paid", pageNumber: null, pageSize: null }).topic).toEqual({
      kind: "pattern",
      pattern: "shop/+/paid",
      prefix: "shop/",
    });
  });

  it("checks a topic, a pattern and an eventId as subscribe and getEvent do", () => {
    expect(code(() => planEventSearch({ topic: "a/#/b", pageNumber: null, pageSize: null }))).toBe(100109);
    expect(code(() => planEventSearch({ topic: "x".repeat(65), pageNumber: null, pageSize: null }))).toBe(100102);
    expect(code(() => planEventSearch({ eventId: "nope", pageNumber: null, pageSize: null }))).toBe(100302);
    expect(planEventSearch({ eventId: "abcdef12-3-42", pageNumber: null, pageSize: null }).eventId).toEqual({
      id: "abcdef12-3-42",
      height: 42,
    });
  });

  it("checks paging (100104, 100107) and refuses a page past the search window (100310)", () => {
    expect(code(() => planEventSearch({ topic: "t", pageNumber: 0, pageSize: null }))).toBe(100104);
    expect(code(() => planEventSearch({ topic: "t", pageNumber: 1, pageSize: 101 }))).toBe(100107);
    expect(code(() => planEventSearch({ topic: "t", pageNumber: SEARCH_WINDOW / 100 + 1, pageSize: 100 }))).toBe(100310);
    expect(planEventSearch({ topic: "t", pageNumber: SEARCH_WINDOW / 100, pageSize: 100 }).pageNumber).toBe(100);
  });

  it("refuses from after to (100309)", () => {
    expect(code(() => planEventSearch({ topic: "t", from: "2000", to: "1000", pageNumber: null, pageSize: null }))).toBe(100309);
  });
});

describe("parseTime", () => {
  it("reads epoch milliseconds and ISO-8601 with a zone; blank is no bound", () => {
    expect(parseTime("1790000000000")).toBe(1_790_000_000_000);
    expect(parseTime("2026-05-01T10:00:00Z")).toBe(Date.UTC(2026, 4, 1, 10));
    expect(parseTime("2026-05-01T12:00:00.5+02:00")).toBe(Date.UTC(2026, 4, 1, 10, 0, 0, 500));
    expect(parseTime(" ")).toBeNull();
    expect(parseTime(undefined)).toBeNull();
  });

  it("refuses anything else with 100309 (a time without a zone would depend on the gateway's)", () => {
    for (const bad of ["yesterday", "2026-05-01", "2026-05-01T10:00:00", "-5", "1e12", "2026-13-01T00:00:00Z"]) {
      expect(
        code(() => parseTime(bad)),
        bad,
      ).toBe(100309);
    }
  });
});

describe("patternPrefix", () => {
  it("is the literal levels before the first wildcard", () => {
    expect(patternPrefix("a/b/+/c")).toBe("a/b/");
    expect(patternPrefix("a/#")).toBe("a/");
    expect(patternPrefix("#")).toBe("");
    expect(patternPrefix("+/x")).toBe("");
  });
});
