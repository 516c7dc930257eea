import { describe, expect, it } from "vitest";
import { filterText, matchesContentFilter, parseContentFilter } from "./content-filter.ts";

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
const f = (v: unknown) => {
  const parsed = parseContentFilter(JSON.stringify(v));
  if (!parsed) throw new Error(`not a filter: ${JSON.stringify(v)}`);
  return parsed;
};

describe("the content filter", () => {
  const order = { order: { status: "paid", total: 12.5, items: [{ sku: "A-1" }] }, region: "eu", vip: null };

  it("matches when every condition holds: equals, in, exists, through objects and array indexes", () => {
    expect(matchesContentFilter(f([{ path: "order.status", equals: "paid" }]), json(order))).toBe(true);
    expect(
      matchesContentFilter(
        f([
          { path: "order.total", equals: 12.5 },
          { path: "region", in: ["us", "eu"] },
        ]),
        json(order),
      ),
    ).toBe(true);
    expect(matchesContentFilter(f([{ path: "order.items.0.sku", equals: "A-1" }]), json(order))).toBe(true);
    expect(
      matchesContentFilter(
        f([
          { path: "vip", exists: true },
          { path: "coupon", exists: false },
        ]),
        json(order),
      ),
    ).toBe(true);
    expect(matchesContentFilter(f([{ path: "vip", equals: null }]), json(order))).toBe(true);
  });

  it("does not match when any condition fails, types differ, or the path is missing", () => {
    expect(
      matchesContentFilter(
        f([
          { path: "order.status", equals: "paid" },
          { path: "region", equals: "us" },
        ]),
        json(order),
      ),
    ).toBe(false);
    expect(matchesContentFilter(f([{ path: "order.total", equals: "12.5" }]), json(order))).toBe(false);
    expect(matchesContentFilter(f([{ path: "order.items.1.sku", exists: true }]), json(order))).toBe(false);
    expect(matchesContentFilter(f([{ path: "order.status.length", exists: true }]), json(order))).toBe(false);
    expect(matchesContentFilter(f([{ path: "order.items.x", exists: true }]), json(order))).toBe(false);
    expect(matchesContentFilter(f([{ path: "constructor", exists: true }]), json({}))).toBe(false);
  });

  it("never matches content that is not JSON, or is larger than 32 KiB", () => {
    const any = f([{ path: "a", exists: false }]);
    expect(matchesContentFilter(any, Buffer.from("plain text"))).toBe(false);
    expect(matchesContentFilter(any, Buffer.from([0xff, 0xfe]))).toBe(false);
    expect(matchesContentFilter(any, json({ pad: "x".repeat(33_000) }))).toBe(false);
    expect(matchesContentFilter(any, json({ b: 1 }))).toBe(true);
  });

  it("refuses anything beyond the small language", () => {
    for (const bad of [
      "",
      "{}",
      "[]",
      '[{"path":"a"}]',
      '[{"path":"a","equals":1,"exists":true}]',
      '[{"path":"a..b","equals":1}]',
      '[{"path":"a[0]","equals":1}]',
      '[{"path":"$..x","equals":1}]',
      '[{"path":"a","equals":{"x":1}}]',
      '[{"path":"a","in":[]}]',
      '[{"path":"a","exists":"yes"}]',
      '[{"path":"a","regex":"x"}]',
      JSON.stringify([{ path: "a.b.c.d.e.f.g.h.i", exists: true }]),
      JSON.stringify(Array.from({ length: 11 }, () => ({ path: "a", exists: true }))),
      JSON.stringify([{ path: "a", equals: "x".repeat(257) }]),
    ])
      expect(parseContentFilter(bad), bad).toBeNull();
  });

  it("is kept with its paths dotted, as it was given", () => {
    const given = [
      { path: "order.items.0.sku", equals: "A-1" },
      { path: "vip", exists: true },
    ];
    expect(JSON.parse(filterText(f(given)))).toEqual(given);
  });
});
