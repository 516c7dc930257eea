import { describe, expect, it } from "vitest";
import { caughtUp, type LedgerEvent, planDispatch } from "./dispatch-plan.ts";
import { END_OF_BLOCK } from "./ledger-position.ts";

const E = END_OF_BLOCK;
const ev = (height: number, idx: number, topic = "t"): LedgerEvent => ({ height, idx, topic });
/** Every event of topic `t` matches the subscriptions named in `fanOut` (default one, "s"). */
const matcher =
  (fanOut: Record<string, string[]> = {}) =>
  (topic: string): string[] =>
    fanOut[topic] ?? (topic === "t" ? ["s"] : []);

describe("caughtUp", () => {
  it.each([
    { cursor: { height: 3, idx: E }, head: 3, want: true },
    { cursor: { height: 4, idx: 0 }, head: 3, want: true },
    { cursor: { height: 3, idx: 2 }, head: 3, want: false },
    { cursor: { height: 2, idx: E }, head: 3, want: false },
    { cursor: { height: 0, idx: E }, head: 0, want: true },
  ])("cursor $cursor.height/$cursor.idx, head $head: $want", ({ cursor, head, want }) => {
    expect(caughtUp(cursor, head)).toBe(want);
  });
});

describe("planDispatch", () => {
  const cases = [
    {
      name: "nothing to do at the head",
      cursor: { height: 5, idx: E },
      head: 5,
      events: [],
      limits: { maxEvents: 10, maxRows: 10 },
      want: null,
    },
    {
      name: "a head with no events after the cursor still moves to the whole head",
      cursor: { height: 2, idx: E },
      head: 4,
      events: [],
      limits: { maxEvents: 10, maxRows: 10 },
      want: { to: { height: 4, idx: E }, events: 0, subs: [] },
    },
    {
      name: "all events taken: to the whole head",
      cursor: { height: 0, idx: E },
      head: 2,
      events: [ev(1, 0), ev(1, 1, "other"), ev(2, 0)],
      limits: { maxEvents: 10, maxRows: 10 },
      want: { to: { height: 2, idx: E }, events: 3, subs: ["s", "s"] },
    },
    {
      name: "event bound ends inside a block: to the last event taken",
      cursor: { height: 0, idx: E },
      head: 3,
      events: [ev(1, 0), ev(1, 1), ev(1, 2)],
      limits: { maxEvents: 2, maxRows: 10 },
      want: { to: { height: 1, idx: 1 }, events: 2, subs: ["s", "s"] },
    },
    {
      name: "event bound ends at a block's last event: to the whole block",
      cursor: { height: 0, idx: E },
      head: 3,
      events: [ev(1, 0), ev(1, 1), ev(2, 0)],
      limits: { maxEvents: 2, maxRows: 10 },
      want: { to: { height: 1, idx: E }, events: 2, subs: ["s", "s"] },
    },
    {
      name: "row bound stops before the event that would exceed it",
      cursor: { height: 0, idx: E },
      head: 1,
      events: [ev(1, 0, "wide"), ev(1, 1, "wide"), ev(1, 2)],
      fanOut: { wide: ["a", "b", "c"] },
      limits: { maxEvents: 10, maxRows: 5 },
      want: { to: { height: 1, idx: 0 }, events: 1, subs: ["a", "b", "c"] },
    },
    {
      name: "a single event matching more than the row bound is taken alone",
      cursor: { height: 0, idx: E },
      head: 1,
      events: [ev(1, 0, "wide"), ev(1, 1)],
      fanOut: { wide: ["a", "b", "c"] },
      limits: { maxEvents: 10, maxRows: 2 },
      want: { to: { height: 1, idx: 0 }, events: 1, subs: ["a", "b", "c"] },
    },
    {
      name: "a cursor inside a block continues after its event",
      cursor: { height: 1, idx: 0 },
      head: 1,
      events: [ev(1, 1), ev(1, 2)],
      limits: { maxEvents: 10, maxRows: 10 },
      want: { to: { height: 1, idx: E }, events: 2, subs: ["s", "s"] },
    },
  ];
  it.each(cases)("$name", ({ cursor, head, events, fanOut, limits, want }) => {
    const plan = planDispatch(cursor, head, events, matcher(fanOut), limits);
    if (want === null) {
      expect(plan).toBeNull();
      return;
    }
    expect(plan?.to).toEqual(want.to);
    expect(plan?.events).toBe(want.events);
    expect(plan?.rows.subs).toEqual(want.subs);
  });

  it("writes rows column-wise with each event's position, and passes the height to the matcher", () => {
    const seen: [string, number][] = [];
    const plan = planDispatch(
      { height: 0, idx: E },
      3,
      [ev(2, 4, "x"), ev(3, 0, "y")],
      (topic, height) => {
        seen.push([topic, height]);
        return height === 3 ? ["late"] : ["a", "b"];
      },
      { maxEvents: 10, maxRows: 10 },
    );
    expect(seen).toEqual([
      ["x", 2],
      ["y", 3],
    ]);
    expect(plan?.rows).toEqual({ subs: ["a", "b", "late"], heights: [2, 2, 3], idxs: [4, 4, 0] });
  });
});
