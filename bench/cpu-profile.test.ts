import { describe, expect, it } from "vitest";
import { cpuPerPublish } from "./broker-scenarios.ts";
import { cpuSecondsFromStat } from "./bench-system.ts";
import { busiestWindow, type CpuProfile, cpuProfileArgs, fileLabel, renderSummary, summarise } from "./cpu-profile.ts";

const frame = (functionName: string, url = "", lineNumber = 0) => ({ functionName, url, lineNumber });

// root → main (ours) → [JSON.stringify (native), parse (express dep)], and (idle).
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)"), children: [2, 5] },
    { id: 2, callFrame: frame("main", "file:///repo/services/gateway/src/main.ts", 9), children: [3, 4] },
    { id: 3, callFrame: frame("stringify") },
    { id: 4, callFrame: frame("parse", "file:///repo/node_modules/qs/lib/parse.js", 0) },
    { id: 5, callFrame: frame("(idle)") },
  ],
  // Deltas lead by one: sample i lasts timeDeltas[i + 1].
  samples: [2, 3, 3, 4, 5, 5],
  timeDeltas: [0, 1000, 2000, 2000, 1000, 3000, 1000],
  startTime: 0,
  endTime: 10_000,
};

describe("summarise", () => {
  const s = summarise(profile);

  it("gives each sample the delta that follows it", () => {
    expect(s.totalMs).toBe(10);
    expect(s.idleMs).toBe(4);
    expect(s.selfByFunction[0]).toEqual({ name: "stringify", ms: 4, pct: 40 });
    expect(s.selfByFunction.find((r) => r.name === "main services/gateway/src/main.ts:10")?.ms).toBe(1);
  });

  it("counts a function's children in its total, once per sample", () => {
    expect(s.totalByFunction.find((r) => r.name.startsWith("main "))?.ms).toBe(6);
    expect(s.totalByFunction.find((r) => r.name === "(root)")?.ms).toBe(10);
  });

  it("sums self time per file and dependency package", () => {
    expect(s.selfByFile.find((r) => r.name === "node_modules/qs")?.ms).toBe(1);
    expect(s.selfByFile.find((r) => r.name === "(native/V8)")?.ms).toBe(8);
  });

  it("renders Markdown tables with the busy share", () => {
    const md = renderSummary("gw", s);
    expect(md).toContain("busy 0.0 s (60 %)");
    expect(md).toContain("| 40.0 % | 4 | stringify |");
  });
});

describe("fileLabel", () => {
  it("names packages, scoped packages, our files and internals", () => {
    expect(fileLabel("file:///r/node_modules/@evb/x/node_modules/kafkajs/src/a.js")).toBe("node_modules/kafkajs");
    expect(fileLabel("file:///r/node_modules/@redis/client/dist/a.js")).toBe("node_modules/@redis/client");
    expect(fileLabel("file:///w/wt/g/packages/domain/src/chain.ts")).toBe("packages/domain/src/chain.ts");
    expect(fileLabel("node:internal/http")).toBe("node:internal/http");
    expect(fileLabel("")).toBe("(native/V8)");
  });
});

describe("cpuProfileArgs", () => {
  it("adds --cpu-prof into a folder per service only when BENCH_CPU_PROF is set", () => {
    expect(cpuProfileArgs("ab-gateway-1", {})).toEqual([]);
    expect(cpuProfileArgs("ab-gateway-1", { BENCH_CPU_PROF: "/tmp/p" })).toEqual(["--cpu-prof", "--cpu-prof-dir=/tmp/p/ab-gateway-1"]);
  });
});

describe("busiestWindow", () => {
  it("finds the stretch with the most busy time and summarise keeps only it", () => {
    // Samples at 0..5 ms: main, idle, idle, stringify, stringify, idle (1 ms each).
    const p: CpuProfile = { ...profile, samples: [2, 5, 5, 3, 3, 5], timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000] };
    const w = busiestWindow(p, 0.002);
    expect(w).toEqual({ fromUs: 3000, toUs: 5000 });
    const s = summarise(p, 10, { fromUs: 3000, toUs: 5000 });
    expect(s.totalMs).toBe(2);
    expect(s.selfByFunction).toEqual([{ name: "stringify", ms: 2, pct: 100 }]);
  });
});

describe("CPU time per publish", () => {
  it("reads utime + stime from /proc/<pid>/stat, whatever the command name holds", () => {
    const stat = "1234 (node ) x) S 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 11 0 100 0 0";
    expect(cpuSecondsFromStat(stat)).toBe(3);
  });

  it("divides each service's CPU time by the publishes", () => {
    expect(cpuPerPublish({ "gateway-1": 1, "indexer-1": 2 }, { "gateway-1": 3, "indexer-1": 2.5 }, 1000)).toEqual({
      "gateway-1": 2,
      "indexer-1": 0.5,
    });
    expect(cpuPerPublish({}, { "gateway-1": 3 }, 0)).toEqual({});
  });
});
