import { describe, expect, it } from "vitest";

// The console's pure browser modules, loaded as plain JS (type-checked on their own: static/tsconfig.json, `npm run typecheck`).
const load = (name: string) => import(new URL(`./static/${name}`, import.meta.url).href);

describe("console: replies of any variant", async () => {
  const { unwrap, ApiError } = await load("api.js");

  it("takes the data out of a success envelope and answers a bare reply as it is", () => {
    expect(unwrap({ code: 0, message: "success", data: [1, 2] })).toEqual([1, 2]);
    expect(unwrap({ total: 1, pageIndex: 0, topicInfoList: [] })).toEqual({ total: 1, pageIndex: 0, topicInfoList: [] });
    expect(unwrap(["a"])).toEqual(["a"]);
    expect(unwrap(true)).toBe(true);
  });

  it("turns any other code into a broker error with that code and message", () => {
    expect(() => unwrap({ code: 200203, message: "No handler found for GET /event-m/admin/x" })).toThrow(ApiError);
    const caught = (() => {
      try {
        unwrap({ code: 100104, message: "pageIndex is invalid", data: null });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(caught).toMatchObject({ code: 100104, brokerMessage: "pageIndex is invalid" });
  });
});

describe("console: rates", async () => {
  const { record, seed, timeTicks } = await load("charts.js");

  it("a rate is the per-second difference of two samples, and a restart's drop gives no point", () => {
    expect(record("test:published", 10, 1_000)).toEqual([]);
    expect(record("test:published", 30, 3_000)).toEqual([{ at: 3_000, rate: 10 }]);
    // A restarted gateway counts from 0 again.
    expect(record("test:published", 2, 4_000)).toEqual([{ at: 3_000, rate: 10 }]);
    expect(record("test:published", 6, 6_000)).toEqual([
      { at: 3_000, rate: 10 },
      { at: 6_000, rate: 2 },
    ]);
    expect(record("test:other", 5, 6_000)).toEqual([]);
  });

  it("puts the history from before the page opened in front of the page's own samples, and keeps an hour", () => {
    expect(record("test:sealed", 100, 100_000)).toEqual([]);
    // From admin/metricsHistory: older samples go first; one not older than the page's first is left out.
    seed("test:sealed", [
      { at: 80_000, value: 60 },
      { at: 90_000, value: 80 },
      { at: 100_000, value: 999 },
    ]);
    expect(record("test:sealed", 110, 105_000)).toEqual([
      { at: 90_000, rate: 2 },
      { at: 100_000, rate: 2 },
      { at: 105_000, rate: 2 },
    ]);
    // A sample not after the last is ignored; past an hour the oldest go.
    expect(record("test:sealed", 500, 105_000)).toHaveLength(3);
    // One sample older than the hour stays, for the rate of the first step inside it.
    expect(record("test:sealed", 110, 3_790_000)).toEqual([{ at: 3_790_000, rate: 0 }]);
  });

  it("marks round times on the time axis, at most four steps apart over the span", () => {
    expect(timeTicks(1_000, 1_000)).toEqual([]);
    expect(timeTicks(61_000, 119_000)).toEqual([75_000, 90_000, 105_000]);
    expect(timeTicks(0, 3_600_000)).toEqual([0, 900_000, 1_800_000, 2_700_000, 3_600_000]);
  });
});

describe("console: payload views", async () => {
  const { decodeContent } = await load("payload-view.js");

  it("decodes Base64 content as UTF-8 text, and anything undecodable as empty", () => {
    expect(decodeContent(Buffer.from('{"a":"ä"}').toString("base64"))).toBe('{"a":"ä"}');
    expect(decodeContent("%%%")).toBe("");
  });
});
