import { describe, expect, it } from "vitest";
import { END_OF_BLOCK } from "./ledger-position.ts";
import { createdStartHeight, restoredStart, resumedStart, rewoundStart } from "./subscription-start.ts";

const E = END_OF_BLOCK;

describe("createdStartHeight", () => {
  it.each([
    { head: 7, dispatched: { height: 7, idx: E }, want: 7 },
    { head: 7, dispatched: { height: 5, idx: 2 }, want: 7 },
    { head: 0, dispatched: { height: 0, idx: E }, want: 0 },
    { head: 3, dispatched: { height: 4, idx: E }, want: 4 },
  ])("head $head, dispatched $dispatched.height/$dispatched.idx: starts above $want", ({ head, dispatched, want }) => {
    expect(createdStartHeight(head, dispatched)).toBe(want);
  });
});

describe("resumedStart", () => {
  it.each([
    {
      name: "dispatch at a block's end, delivery behind: start at that block, refill up to it",
      dispatched: { height: 9, idx: E },
      delivered: { height: 4, idx: 1 },
      want: { startHeight: 9, catchUpTo: { height: 9, idx: E } },
    },
    {
      name: "dispatch inside a block: start at the block before, refill up to the event",
      dispatched: { height: 9, idx: 3 },
      delivered: { height: 4, idx: E },
      want: { startHeight: 8, catchUpTo: { height: 9, idx: 3 } },
    },
    {
      name: "delivered everything dispatched: nothing to refill",
      dispatched: { height: 9, idx: E },
      delivered: { height: 9, idx: E },
      want: { startHeight: 9, catchUpTo: null },
    },
    {
      name: "same block, delivered an earlier event: refill the rest",
      dispatched: { height: 9, idx: 5 },
      delivered: { height: 9, idx: 2 },
      want: { startHeight: 8, catchUpTo: { height: 9, idx: 5 } },
    },
  ])("$name", ({ dispatched, delivered, want }) => {
    expect(resumedStart(dispatched, delivered)).toEqual(want);
  });
});

describe("restoredStart", () => {
  it("the dispatcher past the checkpoint: resumed there, the gap refilled", () => {
    expect(restoredStart({ height: 9, idx: E }, { height: 4, idx: 2 })).toEqual({
      startHeight: 9,
      catchUpTo: { height: 9, idx: E },
      delivered: { height: 4, idx: 2 },
    });
  });

  it("the dispatcher behind the checkpoint: matching starts after the delivered block, nothing delivered is matched again", () => {
    expect(restoredStart({ height: 0, idx: E }, { height: 6, idx: E })).toEqual({
      startHeight: 6,
      catchUpTo: null,
      delivered: { height: 6, idx: E },
    });
  });

  it("a checkpoint inside a block the dispatcher has not reached: that block is sent again from its start", () => {
    expect(restoredStart({ height: 2, idx: E }, { height: 6, idx: 3 })).toEqual({
      startHeight: 5,
      catchUpTo: null,
      delivered: { height: 5, idx: E },
    });
  });

  it("the dispatcher exactly at the checkpoint: nothing to refill", () => {
    expect(restoredStart({ height: 6, idx: 3 }, { height: 6, idx: 3 })).toEqual({
      startHeight: 5,
      catchUpTo: null,
      delivered: { height: 5, idx: E },
    });
  });
});

describe("rewoundStart", () => {
  const delivered = { height: 10, idx: 2 };
  const dispatched = { height: 12, idx: END_OF_BLOCK };

  it("goes back to just before the first event to deliver again, and refills up to the dispatch position", () => {
    expect(rewoundStart({ height: 4, idx: 3 }, delivered, dispatched)).toEqual({ cursor: { height: 4, idx: 2 }, catchUpTo: dispatched });
    // Index -1 is before the block's first event.
    expect(rewoundStart({ height: 4, idx: 0 }, delivered, dispatched).cursor).toEqual({ height: 4, idx: -1 });
  });

  it("never moves the cursor forward (that would skip undelivered events)", () => {
    expect(rewoundStart({ height: 11, idx: 0 }, delivered, dispatched)).toEqual({ cursor: delivered, catchUpTo: dispatched });
    expect(rewoundStart(null, delivered, dispatched).cursor).toEqual(delivered);
  });

  it("refills nothing when the cursor is at the dispatch position", () => {
    expect(rewoundStart(null, dispatched, dispatched)).toEqual({ cursor: dispatched, catchUpTo: null });
  });
});
