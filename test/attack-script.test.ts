import { describe, expect, it } from "vitest";
import { DEFAULT_URL, parseAttackArgs, UsageError } from "../scripts/attack/args.ts";
import { readLoop } from "../scripts/attack/probe.ts";
import { closingLine, judge, renderFindings, renderTable, type ShapeRow } from "../scripts/attack/report.ts";
import { allShapes } from "../scripts/attack/run.ts";
import { existProblem, sizesFor, Tally } from "../scripts/attack/shape.ts";
import { callerAddress } from "../scripts/attack/subscriptions.ts";
import { multipartBody, oneByteChunks, requestHead, splitAnswers } from "../scripts/attack/wire.ts";

const KNOWN = [
  { name: "idle", family: "idle" },
  { name: "form-plus-1MiB", family: "F2" },
  { name: "chunked-100k-form", family: "F3" },
  { name: "chunked-100k-unread", family: "F3" },
  { name: "multipart-unterminated-file", family: "F1" },
];

describe("attack: command line", () => {
  it("defaults to the local gateway, every shape, not quick, not strict", () => {
    expect(parseAttackArgs([], KNOWN)).toEqual({ url: DEFAULT_URL, quick: false, strict: false, shapes: [] });
  });

  it("takes a URL's origin, and the flags", () => {
    expect(parseAttackArgs(["--url", "http://localhost:9000/", "--quick", "--strict"], KNOWN)).toEqual({
      url: "http://localhost:9000",
      quick: true,
      strict: true,
      shapes: [],
    });
  });

  it("expands a family, takes repeated and comma-separated names, and keeps the run order", () => {
    const o = parseAttackArgs(["--shape", "multipart-unterminated-file", "--shape", "f3,form-plus-1MiB,chunked-100k-form"], KNOWN);
    expect(o.shapes).toEqual(["form-plus-1MiB", "chunked-100k-form", "chunked-100k-unread", "multipart-unterminated-file"]);
  });

  it("refuses what it cannot run, saying what would do", () => {
    expect(() => parseAttackArgs(["--shape", "nope"], KNOWN)).toThrow(/no shape "nope"; the shapes are: idle idle, F2 form-plus-1MiB/);
    expect(() => parseAttackArgs(["--url", "not a url"], KNOWN)).toThrow(/--url must be the gateway's address/);
    expect(() => parseAttackArgs(["--url", "https://x"], KNOWN)).toThrow(/http:\/\//);
    expect(() => parseAttackArgs(["--url", "http://x/event-m"], KNOWN)).toThrow(/without a path/);
    expect(() => parseAttackArgs(["--fast"], KNOWN)).toThrow(UsageError);
    expect(() => parseAttackArgs(["--fast"], KNOWN)).toThrow(/usage: npm run attack/);
  });

  it("every shape has a unique name, and each family in the brief is there", () => {
    const shapes = allShapes();
    expect(new Set(shapes.map((s) => s.name)).size).toBe(shapes.length);
    expect(new Set(shapes.map((s) => s.family))).toEqual(new Set(["F1", "F2", "F3", "F4", "F5", "F6", "F10", "F11", "F12"]));
    expect(shapes.at(-1)?.family).toBe("F1");
  });

  it("the full sizes stay within the documented limits (1 MiB body, 10,000 parts, 256 KiB head)", () => {
    const s = sizesFor(false);
    expect(s.formBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(s.queryBytes + 200).toBeLessThan(256 * 1024);
    expect(s.parts).toBeLessThan(10_000);
    expect(s.perCaller).toBeLessThan(1_000);
    expect(oneByteChunks(`topic=${"a".repeat(s.chunks - 6)}`).length).toBeLessThan(1024 * 1024);
  });
});

describe("attack: the loop delay from /metrics", () => {
  const text = [
    "# HELP evb_nodejs_eventloop_lag_max_seconds The maximum recorded event loop delay.",
    "# TYPE evb_nodejs_eventloop_lag_max_seconds gauge",
    'evb_nodejs_eventloop_lag_max_seconds{service="gateway"} 0.238288895',
    'evb_nodejs_eventloop_lag_min_seconds{service="gateway"} 0.010',
    'evb_process_start_time_seconds{service="gateway"} 1795692483',
  ].join("\n");

  it("reads the maximum in ms and the process start time", () => {
    const r = readLoop(text);
    expect(r.loopMaxMs).toBeCloseTo(238.288895, 6);
    expect(r.processStart).toBe(1795692483);
  });

  it("says what is wrong when the gauge is missing", () => {
    expect(() => readLoop("up 1\n")).toThrow(/has no evb_nodejs_eventloop_lag_max_seconds: is --url a gateway/);
  });
});

const row = (m: Partial<ShapeRow>): ShapeRow => ({
  name: "s",
  family: "F2",
  baseline: false,
  requests: 1,
  answersOk: 1,
  loopMaxMs: 20,
  ms: 10,
  problems: [],
  notes: [],
  ...m,
});

describe("attack: verdict and table", () => {
  it("measures each shape against the largest idle window; 50 ms beyond it is still within the goal", () => {
    const v = judge([row({ name: "a", loopMaxMs: 62 }), row({ name: "b", loopMaxMs: 62.1 })], [8, 12, 11], false);
    expect(v.idleMaxMs).toBe(12);
    expect(v.rows.map((r) => [r.name, r.withinGoal])).toEqual([
      ["idle", true],
      ["a", true],
      ["b", false],
    ]);
    expect(v.overGoal.map((r) => r.name)).toEqual(["b"]);
    expect(v.exitCode).toBe(0);
    expect(judge([row({ loopMaxMs: 62.1 })], [12], true).exitCode).toBe(1);
  });

  it("a wrong answer fails without --strict; a baseline over the goal fails nothing; an unknown delay is over the goal", () => {
    expect(judge([row({ problems: ["answered HTTP 500"] })], [10], false).exitCode).toBe(1);
    expect(judge([row({ baseline: true, loopMaxMs: 500 })], [10], true).exitCode).toBe(0);
    const v = judge([row({ loopMaxMs: undefined, problems: ["the gateway died"] })], [10], false);
    expect(v.overGoal).toHaveLength(1);
    expect(v.wrong).toHaveLength(1);
  });

  it("prints the table, the findings and the closing line", () => {
    const v = judge(
      [
        row({ name: "pipeline-2000", family: "F4", requests: 2000, answersOk: 2000, loopMaxMs: 180.25, ms: 900 }),
        row({ name: "pipeline-2000-50conn", family: "F4", baseline: true, requests: 2000, answersOk: 2000, loopMaxMs: 30 }),
        row({ name: "chunked-bad-size", family: "F6", requests: 3, answersOk: 0, problems: ["chunk size zz: hangs"], notes: ["retried"] }),
      ],
      [10, 12.5],
      true,
    );
    const table = renderTable(v).split("\n");
    expect(table[0]).toMatch(
      /^\| shape +\| requests \| answers ok \| max loop delay ms \| idle max ms \| excess ms \| within 50 ms goal \| shape ms \|$/,
    );
    expect(table[1]).toMatch(/^\|-+\|-+:\|/);
    expect(table[2]).toMatch(/^\| idle +\| +0 \| +– \| +12\.5 \| +12\.5 \| +– \| +– \| +– \|$/);
    expect(table[3]).toMatch(/^\| F4 pipeline-2000 +\| +2000 \| +2000\/2000 \| +180\.3 \| +12\.5 \| +167\.8 \| +no \| +900 \|$/);
    expect(table[4]).toContain("(yes, baseline)");
    expect(table[5]).toContain("0/3 WRONG");
    expect(renderFindings(v)).toEqual(["WRONG F6 chunked-bad-size: chunk size zz: hangs", "note  F6 chunked-bad-size: retried"]);
    expect(closingLine(v)).toBe(
      "1 of 2 shapes over 50 ms beyond the idle max (12.5 ms): pipeline-2000; 1 answered wrongly: chunked-bad-size; exit 1 (wrong answers)",
    );
  });
});

describe("attack: wire bytes and answers", () => {
  it("writes one-byte chunks, multipart bodies and request heads", () => {
    expect(oneByteChunks("ab")).toBe("1\r\na\r\n1\r\nb\r\n0\r\n\r\n");
    expect(() => oneByteChunks("é")).toThrow(/ASCII/);
    expect(multipartBody("XX", [["a", "1"]])).toBe('--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XX--\r\n');
    expect(multipartBody("XX", [["a", "1"]], false)).not.toContain("--XX--");
    expect(requestHead("GET", "/p", { Host: "h" })).toBe("GET /p HTTP/1.1\r\nHost: h\r\n\r\n");
  });

  it("cuts pipelined answers apart by Content-Length and chunked framing, in order", () => {
    const a = "HTTP/1.1 200 OK\r\nX-Request-Id: a\r\nContent-Length: 5\r\n\r\nfalse";
    const b = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"x":\r\n4\r\n"é"\r\n1\r\n}\r\n0\r\n\r\n';
    const c = "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n{}";
    const { answers, leftoverBytes } = splitAnswers(a + b + c);
    expect(answers.map((x) => [x.status, x.json])).toEqual([
      [200, false],
      [200, { x: "é" }],
      [400, {}],
    ]);
    expect(answers[0]?.headers["x-request-id"]).toBe("a");
    expect(leftoverBytes).toBe(0);
  });

  it("reports an answer cut off", () => {
    const cut = splitAnswers("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfalseHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfa");
    expect(cut.answers).toHaveLength(1);
    expect(cut.leftoverBytes).toBe(40);
  });
});

describe("attack: answer checks", () => {
  it("an exist answer is true/false or a broker error, with HTTP 200", () => {
    expect(existProblem({ status: 200, json: false, text: "false" })).toBeUndefined();
    expect(existProblem({ status: 200, json: { code: 100103, message: "topic name is blank" }, text: "" })).toBeUndefined();
    expect(existProblem({ status: 200, json: { code: 100103, message: "m" }, text: "{…}" }, true)).toMatch(/not true\/false/);
    expect(existProblem({ status: 431, json: undefined, text: "too large" })).toBe("answered HTTP 431: too large");
    expect(existProblem({ status: 200, json: { ok: 1 }, text: '{"ok":1}' })).toMatch(/not an exist answer/);
  });

  it("a tally keeps the first three problems and counts the rest", () => {
    const t = new Tally();
    for (let i = 0; i < 6; i++) t.record(i === 0 ? undefined : `p${i}`);
    t.fail("whole");
    expect(t.outcome()).toEqual({
      requests: 6,
      answersOk: 1,
      problems: ["p1", "p2", "p3", "whole", "… and 2 more wrong answers"],
      notes: [],
    });
  });

  it("callers are loopback addresses from 127.0.0.2 up", () => {
    expect([0, 1, 253, 254].map(callerAddress)).toEqual(["127.0.0.2", "127.0.0.3", "127.0.0.255", "127.0.1.0"]);
  });
});
