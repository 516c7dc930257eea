import { describe, expect, it } from "vitest";
import { callbackOrder, dataProblems, firstAfter, formatTable, judgeReadiness, longestGap, type Sample } from "./judge.ts";

describe("longestGap", () => {
  it("counts the stretch before the first and after the last time too", () => {
    expect(longestGap([12, 14], 10, 30)).toBe(16);
    expect(longestGap([2, 28], 10, 30)).toBe(18);
  });
  it("is the whole window when nothing falls in it", () => {
    expect(longestGap([], 10, 30)).toBe(20);
  });
  it("ignores the order of the times", () => {
    expect(longestGap([25, 11, 15], 10, 30)).toBe(10);
  });
});

describe("firstAfter", () => {
  it("finds the earliest time at or after the moment", () => {
    expect(firstAfter([9, 30, 12, 11], 11)).toBe(11);
    expect(firstAfter([1, 2], 5)).toBeUndefined();
  });
});

describe("callbackOrder", () => {
  it("counts repeats as duplicates and keeps order per topic", () => {
    const ids = ["aaaaaaaa-1-1", "bbbbbbbb-7-1", "aaaaaaaa-2-1", "aaaaaaaa-1-1", "bbbbbbbb-8-2", "aaaaaaaa-3-2"];
    expect(callbackOrder(ids)).toEqual({ duplicates: 1, outOfOrder: 0 });
  });
  it("finds a first callback below one received before in its topic", () => {
    expect(callbackOrder(["aaaaaaaa-1-1", "aaaaaaaa-3-1", "aaaaaaaa-2-1"])).toEqual({ duplicates: 0, outOfOrder: 1 });
  });
});

const sample = (at: number, status: number, took = 5): Sample => ({ at, status, took });

describe("judgeReadiness", () => {
  const window = { faultAt: 1_000, healAt: 31_000, endAt: 46_000 };
  it("is truthful when the service that lost what it needs says so in time and comes back in time", () => {
    const samples = new Map([
      ["indexer-1", [sample(500, 200), sample(3_000, 503), sample(30_000, 503), sample(32_500, 200)]],
      ["gateway-1", [sample(500, 200), sample(20_000, 200), sample(31_500, 200)]],
    ]);
    expect(judgeReadiness(samples, window, { mustFail: ["indexer-1"], unreachable: [] }, 2_000)).toEqual([]);
  });
  it("names a service that said ready throughout, one too slow to answer, and one slow to come back", () => {
    const samples = new Map([
      ["indexer-1", [sample(3_000, 200), sample(34_000, 200)]],
      ["gateway-1", [sample(5_000, 0, 1_000), sample(31_100, 200)]],
    ]);
    expect(judgeReadiness(samples, window, { mustFail: ["indexer-1"], unreachable: [] }, 2_000)).toEqual([
      "indexer-1 said ready throughout",
      "indexer-1 ready again only after 3.0 s",
      "gateway-1 left 1 probe(s) unanswered for 1 s",
    ]);
  });
  it("does not judge how soon a restarted service is ready", () => {
    const samples = new Map([["indexer-1", [sample(5_000, 0, 1_000), sample(40_000, 200)]]]);
    expect(judgeReadiness(samples, window, { mustFail: [], unreachable: ["indexer-1"], restarted: ["indexer-1"] }, 2_000)).toEqual([]);
    expect(judgeReadiness(samples, window, { mustFail: [], unreachable: ["indexer-1"] }, 2_000)).toEqual([
      "indexer-1 ready again only after 9.0 s",
    ]);
  });

  it("says what held a service that was slow to come back, or never came back", () => {
    const samples = new Map([
      [
        "indexer-1",
        [{ ...sample(31_200, 503), reason: "Kafka: no answer" }, { ...sample(33_000, 503), reason: "re-joining" }, sample(34_000, 200)],
      ],
      ["indexer-2", [{ ...sample(40_000, 503), reason: "lagging behind the log" }]],
    ]);
    expect(judgeReadiness(samples, window, { mustFail: [], unreachable: [] }, 2_000)).toEqual([
      "indexer-1 ready again only after 3.0 s (re-joining)",
      "indexer-2 not ready again (lagging behind the log)",
    ]);
  });

  it("does not judge the answers of a host that was cut off", () => {
    const samples = new Map([["notifier-1", [sample(5_000, 0, 1_000), sample(31_500, 200)]]]);
    expect(judgeReadiness(samples, window, { mustFail: [], unreachable: ["notifier-1"] }, 2_000)).toEqual([]);
  });
});

describe("dataProblems and formatTable", () => {
  const clean = {
    scenario: "x",
    acked: 10,
    lost: 0,
    renamed: 0,
    duplicated: 0,
    publishGapMs: 1_000,
    callbackGapMs: 2_000,
    callbacksMissing: 0,
    callbacksOutOfOrder: 0,
    callbackDuplicates: 3,
  };
  it("finds nothing wrong with a clean result, whatever its duplicates (at least once allows them)", () => {
    expect(dataProblems(clean)).toEqual([]);
  });
  it("names every broken data goal", () => {
    expect(dataProblems({ ...clean, lost: 1, renamed: 2, duplicated: 3, callbacksMissing: 4, callbacksOutOfOrder: 5 })).toHaveLength(5);
  });
  it("prints one row per scenario under the header", () => {
    const table = formatTable([{ ...clean, readiness: [], misses: [], dataProblems: [] }]).split("\n");
    expect(table).toHaveLength(3);
    expect(table[2]).toMatch(/^\| x +\| 10 +\| 0 +\| 0 +\| 0 +\| 1\.0 +\| 2\.0 +\| 0\/0\/3 +\| yes +\|$/);
  });
});
