import { describe, expect, it } from "vitest";
import type { SubscriptionChange } from "@evb/storage";
import { SubscriptionIndex } from "./subscription-index.ts";

const change = (id: string, topic: string, over: Partial<SubscriptionChange> = {}): SubscriptionChange => ({
  id,
  topic,
  matchRule: "M",
  startHeight: 0,
  active: true,
  revision: 1,
  ...over,
});

describe("subscription index", () => {
  it("matches names and + / # patterns, and only events above each start height", () => {
    const index = new SubscriptionIndex();
    index.apply([
      change("exact", "com/a", { revision: 1 }),
      change("plus", "com/+", { revision: 2 }),
      change("hashM", "com/#", { revision: 3 }),
      change("hashE", "com/#", { revision: 4, matchRule: "E" }),
      change("late", "com/a", { revision: 5, startHeight: 10 }),
    ]);
    expect(index.revision).toBe(5);
    expect(index.match("com/a", 5).sort()).toEqual(["exact", "hashE", "hashM", "plus"]);
    expect(index.match("com/a", 11).sort()).toEqual(["exact", "hashE", "hashM", "late", "plus"]);
    expect(index.match("com", 11)).toEqual(["hashE"]);
    expect(index.match("com/a/b", 11).sort()).toEqual(["hashE", "hashM"]);
  });

  it("drops unsubscribed ids and re-indexes a changed topic", () => {
    const index = new SubscriptionIndex();
    index.apply([change("s", "a", { revision: 1 })]);
    index.apply([change("s", "b", { revision: 2 })]);
    expect(index.match("a", 1)).toEqual([]);
    expect(index.match("b", 1)).toEqual(["s"]);
    index.apply([change("s", "b", { revision: 3, active: false })]);
    expect(index.match("b", 1)).toEqual([]);
    expect(index.size).toBe(0);
  });
});
