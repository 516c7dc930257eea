import { describe, expect, it } from "vitest";
import { formatDelay, nextRestartDelay } from "./restart-backoff.ts";

describe("nextRestartDelay", () => {
  it("waits 1 s first, doubles on each quick death, and stops at 30 s", () => {
    const waits: number[] = [];
    let prev: number | undefined;
    for (let i = 0; i < 8; i++) {
      prev = nextRestartDelay(prev, 0);
      waits.push(prev);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it("starts again from 1 s after a healthy minute", () => {
    expect(nextRestartDelay(30_000, 59_999)).toBe(30_000);
    expect(nextRestartDelay(30_000, 60_000)).toBe(1_000);
  });
});

describe("formatDelay", () => {
  it("reads as the restart message says it", () => {
    expect(formatDelay(2_000)).toBe("2 s");
    expect(formatDelay(1_500)).toBe("1.5 s");
    expect(formatDelay(250)).toBe("250 ms");
  });
});
