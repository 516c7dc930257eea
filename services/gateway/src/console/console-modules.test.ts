import { describe, expect, it } from "vitest";

// The console's pure browser modules, loaded as plain JS (the type-checker does not read them).
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
  const { counterTotals, record } = await load("charts.js");
  const text = (published: number, delivered: number) => `# HELP evb_publish_total Events published.
# TYPE evb_publish_total counter
evb_publish_total{variant="M"} ${published - 1}
evb_publish_total{variant="L"} 1
# HELP evb_publish_failures_total Failed publishes.
# TYPE evb_publish_failures_total counter
evb_publish_failures_total 7
# HELP evb_callbacks_delivered Callbacks answered 2xx.
# TYPE evb_callbacks_delivered counter
evb_callbacks_delivered_total ${delivered}
# TYPE evb_backlog gauge
evb_backlog 12
`;

  it("sums each counter over its labels, under its family name, and leaves gauges out", () => {
    const totals = counterTotals(text(10, 4));
    expect(Object.fromEntries(totals)).toEqual({ evb_publish_total: 10, evb_publish_failures_total: 7, evb_callbacks_delivered: 4 });
  });

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
});

describe("console: payload views", async () => {
  const { decodeContent } = await load("payload-view.js");

  it("decodes Base64 content as UTF-8 text, and anything undecodable as empty", () => {
    expect(decodeContent(Buffer.from('{"a":"ä"}').toString("base64"))).toBe('{"a":"ä"}');
    expect(decodeContent("%%%")).toBe("");
  });
});
