import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ParamCollector, ParamReadError } from "./param-collector.ts";
import { parseQueryString, parseUrlEncoded, readUrlEncoded, STEP_BYTES, UrlEncodedSplitter } from "./url-encoded.ts";

function parse(text: string, limit?: number): Map<string, string[]> {
  const c = new ParamCollector(limit);
  parseUrlEncoded(Buffer.from(text, "utf8"), c);
  return c.params;
}

describe("parseUrlEncoded", () => {
  it("splits pairs on & and the first =, keeping every value of a name in order", () => {
    expect(parse("topic=a&x=1=2&topic=b&flag")).toEqual(
      new Map([
        ["topic", ["a", "b"]],
        ["x", ["1=2"]],
        ["flag", [""]],
      ]),
    );
  });

  it("decodes + and %XX as UTF-8, keeps malformed escapes, replaces invalid UTF-8", () => {
    expect(parse("a=%E4%B8%AD+x&b=%zz%&c=%FF&d%2B=1")).toEqual(
      new Map([
        ["a", ["中 x"]],
        ["b", ["%zz%"]],
        ["c", ["\ufffd"]],
        ["d+", ["1"]],
      ]),
    );
  });

  it("skips empty pairs and nameless ones", () => {
    expect(parse("&&=x&a=&")).toEqual(new Map([["a", [""]]]));
  });

  it("names like __proto__ are ordinary parameters", () => {
    expect(parse("__proto__=1&constructor=2").get("__proto__")).toEqual(["1"]);
  });

  // Regression: the urlencoded body parser merged a repeated name by copying its whole list on
  // every repeat, so `topic=x&a&a&a…` (1 MiB) kept the gateway's CPU busy for minutes. This runs
  // the same shape at 1 MiB with the count limit lifted; the test's own timeout is the hang bound.
  it("a 1 MiB body repeating one name is read in one linear pass", () => {
    const body = `topic=x${"&a".repeat(512 * 1024)}`;
    const params = parse(body, Number.POSITIVE_INFINITY);
    expect(params.get("a")).toHaveLength(512 * 1024);
    // The same without a single "=" after the first pair: the search for "=" must not rescan.
    expect(parse(`x${"&a".repeat(512 * 1024)}`, Number.POSITIVE_INFINITY).get("a")).toHaveLength(512 * 1024);
  });

  it("refuses more pairs than the limit, counting repeats", () => {
    expect(() => parse("a&a&a", 2)).toThrow(ParamReadError);
    expect(() => parse("a&a&a", 2)).toThrow(/more than 2 request parameters/);
    expect(parse("a&a", 2).get("a")).toEqual(["", ""]);
  });

  it("reads raw UTF-8 bytes and escapes alike, and a query string byte for byte", () => {
    expect(parse("a=中%E6%96%87&b=%E4%B8")).toEqual(
      new Map([
        ["a", ["中文"]],
        ["b", ["\ufffd"]],
      ]),
    );
    const c = new ParamCollector();
    parseQueryString("t=%E4%B8%AD+1&u=%", c);
    expect(c.params).toEqual(
      new Map([
        ["t", ["中 1"]],
        ["u", ["%"]],
      ]),
    );
  });

  // Regression (issue 18, F2): `replaceAll("+", " ")` over a 1 MiB value of `+` held the gateway's
  // event loop for up to 1.3 s. The decoding is now a byte loop; this checks what it produces for
  // the shapes that were slow (the time is measured by `npm run attack`, not here).
  it("a 1 MiB value of + or of % decodes to spaces or stays as written", () => {
    const plus = parse(`topic=${"+".repeat(1 << 20)}`).get("topic")?.[0];
    expect(plus).toBe(" ".repeat(1 << 20));
    const percent = parse(`topic=${"%".repeat(1 << 20)}`).get("topic")?.[0];
    expect(percent).toBe("%".repeat(1 << 20));
  });
});

// Regression (issue 28): a 1 MiB form body of `&` (a million empty pairs) held the gateway's event
// loop 111–164 ms in one parse. A body is now read STEP_BYTES of pairs per turn (the time is
// measured by `npm run attack -- --shape form-amp-1MiB`, not here).
describe("a form body read in steps", () => {
  const ampBody = Buffer.from(`${"&".repeat(1 << 20)}topic=a`);

  it("one step reads only the pairs that start within STEP_BYTES", () => {
    const c = new ParamCollector();
    const splitter = new UrlEncodedSplitter(ampBody, c);
    let steps = 0;
    for (let before = 0; !splitter.step(); before = splitter.position) {
      steps++;
      expect(splitter.position - before).toBeLessThanOrEqual(STEP_BYTES);
      expect(c.params.size).toBe(0);
    }
    expect(steps).toBeGreaterThanOrEqual(Math.floor(ampBody.length / STEP_BYTES));
    expect(c.params.get("topic")).toEqual(["a"]);
  });

  it("readUrlEncoded lets the event loop turn between steps", async () => {
    const c = new ParamCollector();
    let read = false;
    const reading = readUrlEncoded(ampBody, c).then(() => {
      read = true;
    });
    // Only microtasks run here: one step is done, the rest waits for later turns of the loop.
    for (let i = 0; i < 1_000; i++) await Promise.resolve();
    expect(read).toBe(false);
    let turns = 0;
    while (!read) {
      await new Promise((r) => setImmediate(r));
      turns++;
    }
    await reading;
    expect(turns).toBeGreaterThanOrEqual(Math.floor(ampBody.length / STEP_BYTES) - 1);
    expect(c.params.get("topic")).toEqual(["a"]);
  });

  it("steps of any size read the same pairs as one pass", () => {
    const text = fc.stringMatching(/^[a=&+%2Fé]{0,60}$/);
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 8 }), (body, stepBytes) => {
        const bytes = Buffer.from(body, "utf8");
        const stepped = new ParamCollector(Number.POSITIVE_INFINITY);
        const splitter = new UrlEncodedSplitter(bytes, stepped);
        while (!splitter.step(stepBytes));
        const whole = new ParamCollector(Number.POSITIVE_INFINITY);
        parseUrlEncoded(bytes, whole);
        expect(stepped.params).toEqual(whole.params);
      }),
    );
  });
});
