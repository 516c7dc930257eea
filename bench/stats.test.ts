import { describe, expect, it } from "vitest";
import { formatRatio, latencyOf, mergeQuantiles, percentileOf, ratio } from "./stats.ts";

describe("percentileOf", () => {
  it("takes the smallest value with at least p % of the samples at or below it", () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentileOf(sorted, 50)).toBe(50);
    expect(percentileOf(sorted, 99)).toBe(99);
    expect(percentileOf(sorted, 100)).toBe(100);
    expect(percentileOf([7], 1)).toBe(7);
    expect(percentileOf([], 50)).toBe(0);
  });
});

describe("latencyOf", () => {
  it("sorts the samples itself and reports the largest as max", () => {
    expect(latencyOf([5, 1, 4, 2, 3])).toEqual({ p50: 3, p90: 5, p99: 5, max: 5 });
  });
});

describe("mergeQuantiles", () => {
  const sketch = (count: number, from: number) => ({ count, q: Array.from({ length: 100 }, (_, i) => from + i) });

  it("weights each generator's quantiles by how many answers it saw", () => {
    // 900 answers at 0..99 ms and 100 at 1000..1099 ms: the slow tenth shows only above p90.
    const l = mergeQuantiles([sketch(900, 0), sketch(100, 1000)]);
    expect(l.p50).toBe(55);
    expect(l.p90).toBe(99);
    expect(l.p99).toBe(1089);
    expect(l.max).toBe(1099);
  });

  it("ignores empty sketches and gives zeros when nothing was measured", () => {
    expect(mergeQuantiles([sketch(0, 500), sketch(10, 0)]).max).toBe(99);
    expect(mergeQuantiles([])).toEqual({ p50: 0, p90: 0, p99: 0, max: 0 });
  });
});

describe("ratio", () => {
  it("divides by the baseline, and has no value without one", () => {
    expect(ratio(5_000, 50_000)).toBeCloseTo(0.1);
    expect(ratio(5_000, 0)).toBeNull();
    expect(ratio(5_000, undefined)).toBeNull();
    expect(formatRatio(0.104)).toBe("10.4 %");
    expect(formatRatio(0.0016)).toBe("0.16 %");
    expect(formatRatio(null)).toBe("–");
  });
});
