import { describe, expect, it } from "vitest";
import { mergeLoadResults, parseWrkOutput } from "./wrk-runner.ts";

const sketch = Array.from({ length: 200 }, (_, i) => (i + 1) * 100);
const line = (over: Record<string, unknown> = {}) =>
  `BENCH-RESULT ${JSON.stringify({
    requests: 2000,
    durationUs: 2_000_000,
    success: 1990,
    failed: 10,
    failSample: '200 {"code":100101,"message":"topic not exist","data":null}',
    errors: { connect: 1, read: 0, write: 0, status: 10, timeout: 2 },
    latencyUs: { p50: 1500, p90: 2500, p99: 9000, max: 20_250 },
    sketchUs: sketch,
    ...over,
  })}`;
const WRK_OUTPUT = `Running 2s test @ http://127.0.0.1:8080/event-broker/rest/publish
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.83ms    2.67ms  20.25ms   95.99%
  2000 requests in 2.00s, 6.18MB read
  Non-2xx or 3xx responses: 10
Requests/sec:   1000.00
${line()}
`;

describe("parseWrkOutput", () => {
  it("reads the line load.lua prints among wrk's own output, in ms and per second", () => {
    const r = parseWrkOutput(WRK_OUTPUT);
    expect(r.requestsPerSec).toBe(1000);
    expect(r.throughput).toBe(995);
    expect(r.success).toBe(1990);
    expect(r.failed).toBe(10);
    expect(r.failSample).toContain("topic not exist");
    expect(r.latency).toEqual({ p50: 1.5, p90: 2.5, p99: 9, max: 20.25 });
    expect(r.sketch.count).toBe(2000);
    expect(r.sketch.q[199]).toBe(20);
  });

  it("counts non-2xx answers once, as failed, not again as transport errors", () => {
    expect(parseWrkOutput(WRK_OUTPUT).errors).toBe(3);
  });

  it("says so when wrk printed no result line (e.g. the Lua script failed)", () => {
    expect(() => parseWrkOutput("PANIC: unprotected error in call to Lua API\n")).toThrow(/no BENCH-RESULT line/);
  });
});

describe("mergeLoadResults", () => {
  it("adds the counts of generators run side by side and merges their latency", () => {
    const fast = parseWrkOutput(line());
    const slow = parseWrkOutput(
      line({ sketchUs: sketch.map((v) => v * 10), latencyUs: { p50: 15_000, p90: 25_000, p99: 90_000, max: 202_500 } }),
    );
    const m = mergeLoadResults([fast, slow]);
    expect(m.throughput).toBe(1990);
    expect(m.success).toBe(3980);
    expect(m.errors).toBe(6);
    expect(m.latency.max).toBe(202.5);
    // Equal counts, so the merged p50 is the 200th of the 400 quantile points (182 fast, 18 slow)
    // and the top 1 % is the slow run's top 2 %.
    expect(m.latency.p50).toBe(18.2);
    expect(m.latency.p99).toBe(196);
  });
});
