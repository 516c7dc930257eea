import { describe, expect, it } from "vitest";
import { END_OF_BLOCK } from "@evb/storage";
import { DispatchWatch } from "./dispatch-watch.ts";

const at = (height: number, idx = END_OF_BLOCK) => ({ height, idx });

describe("DispatchWatch", () => {
  it("a cursor standing still behind the head longer than the bound is stuck, naming the group", () => {
    const w = new DispatchWatch(1_000);
    w.observe({ groupId: "2", cursor: at(3), head: 5 }, 0);
    w.observe({ groupId: "2", cursor: at(3), head: 6 }, 900);
    expect(w.stuck(1_000)).toEqual([]);
    expect(w.stuck(1_001)).toEqual([{ groupId: "2", cursorHeight: 3, head: 6, stillForMs: 1_001 }]);
  });

  it("a cursor level with the head is idle, not stuck, however long it stays", () => {
    const w = new DispatchWatch(1_000);
    w.observe({ groupId: "1", cursor: at(5), head: 5 }, 0);
    w.observe({ groupId: "1", cursor: null, head: 0 }, 10_000);
    expect(w.stuck(60_000)).toEqual([]);
  });

  it("a cursor in the middle of the head block is behind", () => {
    const w = new DispatchWatch(1_000);
    w.observe({ groupId: "1", cursor: at(5, 2), head: 5 }, 0);
    expect(w.stuck(2_000)).toHaveLength(1);
  });

  it("no cursor yet with sealed blocks is behind", () => {
    const w = new DispatchWatch(1_000);
    w.observe({ groupId: "1", cursor: null, head: 1 }, 0);
    expect(w.stuck(2_000)).toEqual([{ groupId: "1", cursorHeight: 0, head: 1, stillForMs: 2_000 }]);
  });

  it("a cursor that moves restarts the clock; one that catches up clears it", () => {
    const w = new DispatchWatch(1_000);
    w.observe({ groupId: "1", cursor: at(1), head: 9 }, 0);
    w.observe({ groupId: "1", cursor: at(4), head: 9 }, 800);
    expect(w.stuck(1_500)).toEqual([]);
    expect(w.stuck(1_801)).toHaveLength(1);
    w.observe({ groupId: "1", cursor: at(9), head: 9 }, 1_900);
    expect(w.stuck(5_000)).toEqual([]);
  });
});
