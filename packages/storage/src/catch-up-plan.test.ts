import { describe, expect, it } from "vitest";
import { type LookedAt, planRefillPage } from "./catch-up-plan.ts";

const ev = (height: number, idx: number, topic: string, seq: number | null = null): LookedAt => ({ height, idx, topic, seq });
const plain = { topic: "com/a", matchRule: "M" as const, pattern: false };
const wild = { topic: "com/+", matchRule: "M" as const, pattern: true };

describe("planRefillPage", () => {
  it.each([
    {
      name: "an empty page is done and stays where it was",
      at: { height: 4, idx: 1, seq: 7 },
      sub: plain,
      looked: [],
      limit: 10,
      want: { hits: [], next: { height: 4, idx: 1, seq: 7 }, done: true },
    },
    {
      name: "a plain topic takes every event looked at and moves to the last one's seq",
      at: { height: 0, idx: 0, seq: 0 },
      sub: plain,
      looked: [ev(1, 0, "com/a", 1), ev(2, 3, "com/a", 2)],
      limit: 2,
      want: {
        hits: [
          { height: 1, idx: 0 },
          { height: 2, idx: 3 },
        ],
        next: { height: 2, idx: 3, seq: 2 },
        done: false,
      },
    },
    {
      name: "a pattern takes only the matching events but moves past all of them",
      at: { height: 0, idx: 0, seq: null },
      sub: wild,
      looked: [ev(1, 0, "com/a"), ev(1, 1, "org/a"), ev(2, 0, "com/b/c"), ev(2, 1, "com/b")],
      limit: 10,
      want: {
        hits: [
          { height: 1, idx: 0 },
          { height: 2, idx: 1 },
        ],
        next: { height: 2, idx: 1, seq: null },
        done: true,
      },
    },
    {
      name: "a full page of non-matching events is not done",
      at: { height: 0, idx: 0, seq: null },
      sub: wild,
      looked: [ev(1, 0, "org/a"), ev(1, 1, "org/b")],
      limit: 2,
      want: { hits: [], next: { height: 1, idx: 1, seq: null }, done: false },
    },
  ])("$name", ({ at, sub, looked, limit, want }) => {
    expect(planRefillPage(at, sub, looked, limit)).toEqual(want);
  });
});
