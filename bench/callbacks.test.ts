import { describe, expect, it } from "vitest";
import { type Arrival, callbackLatencies, orderViolations } from "./callbacks.ts";

describe("callbackLatencies", () => {
  it("measures from each publish's answer to its callback, skipping callbacks of unknown publishes", () => {
    const arrivals: Arrival[] = [
      ["s1", "a/t0", "aaaa-1-1", 1010],
      ["s2", "a/t0", "aaaa-1-1", 1030],
      ["s1", "a/t0", "zzzz-9-9", 1040],
    ];
    expect(callbackLatencies(arrivals, new Map([["aaaa-1-1", 1000]]))).toEqual([10, 30]);
  });
});

describe("orderViolations", () => {
  it("counts a callback that arrives after a later event of the same subscription and topic", () => {
    const arrivals: Arrival[] = [
      ["s1", "a/t0", "h-1-1", 1],
      ["s1", "a/t0", "h-3-2", 2],
      ["s1", "a/t0", "h-2-2", 3],
      ["s2", "a/t0", "h-1-1", 4],
      ["s1", "a/t1", "g-1-2", 5],
    ];
    expect(orderViolations(arrivals)).toBe(1);
  });

  it("does not count a redelivery of the latest event (at-least-once)", () => {
    expect(
      orderViolations([
        ["s1", "a/t0", "h-1-1", 1],
        ["s1", "a/t0", "h-1-1", 2],
      ]),
    ).toBe(0);
  });

  it("does not count a repeat of an older event, but does count an older event arriving for the first time late", () => {
    expect(
      orderViolations([
        ["s1", "a/t0", "h-1-1", 1],
        ["s1", "a/t0", "h-2-1", 2],
        ["s1", "a/t0", "h-1-1", 3],
        ["s1", "a/t0", "h-2-1", 4],
      ]),
    ).toBe(0);
    expect(
      orderViolations([
        ["s1", "a/t0", "h-2-1", 1],
        ["s1", "a/t0", "h-1-1", 2],
        ["s1", "a/t0", "h-2-1", 3],
      ]),
    ).toBe(1);
  });
});
