import { describe, expect, it } from "vitest";
import { CallerQuota, subscriberOf } from "./caller-quota.ts";

describe("CallerQuota", () => {
  it("caps subscriptions and filters per caller, over everything the caller holds; what ends frees its place", () => {
    const q = new CallerQuota({ subscriptions: 3, filters: 5 });
    expect(q.take("key:a", 4)).toBe(true);
    expect(q.take("key:a", 2)).toBe(false);
    expect(q.take("key:a", 1)).toBe(true);
    expect(q.take("key:a", 0)).toBe(true);
    expect(q.take("key:a", 0)).toBe(false);
    // Another caller has its own.
    expect(q.take("10.0.0.7", 5)).toBe(true);
    q.give("key:a", 4);
    expect(q.take("key:a", 4)).toBe(true);
    for (const f of [4, 1, 0]) q.give("key:a", f);
    expect(q.take("key:a", 5)).toBe(true);
  });

  it("a caller is its API key, or its address without one", () => {
    expect(subscriberOf(null, "10.0.0.7")).toBe("10.0.0.7");
    expect(subscriberOf({ id: "k1" } as Parameters<typeof subscriberOf>[0], "10.0.0.7")).toBe("key:k1");
  });
});
