import { describe, expect, it } from "vitest";
import { decodeLogRecord, decodeReceipts, encodeLogRecord, type LogRecord, Receipt } from "./log-record.ts";

const base: LogRecord = {
  v: 1,
  requestId: "r-1",
  gatewayId: "gw-1",
  groupId: "1",
  topic: "t",
  content: "hello",
  extensions: {},
  sender: "0x0",
  publishedAt: 1,
};

describe("log record", () => {
  it("carries the HTTP request id through encode and decode", () => {
    expect(decodeLogRecord(encodeLogRecord({ ...base, httpRequestId: "trace-1" }))).toEqual({
      ok: true,
      record: { ...base, httpRequestId: "trace-1" },
    });
  });

  it("still decodes records written before the HTTP request id existed", () => {
    const old = Buffer.from(JSON.stringify(base));
    expect(decodeLogRecord(old)).toEqual({ ok: true, record: base });
  });

  it("drops a malformed HTTP request id, never the record", () => {
    for (const bad of ["x".repeat(129), 42, null]) {
      const r = decodeLogRecord(Buffer.from(JSON.stringify({ ...base, httpRequestId: bad })));
      expect(r).toEqual({ ok: true, record: { ...base, httpRequestId: undefined } });
    }
  });
});

describe("decodeReceipts", () => {
  const ok = { requestId: "r", eventId: "e", height: 3 };
  // The verdicts the Receipt schema gives, entry by entry (the gateway checked with it before).
  it.each<[string, string, unknown]>([
    ["a list", JSON.stringify([ok, { ...ok, requestId: "s" }]), [ok, { ...ok, requestId: "s" }]],
    ["one receipt", JSON.stringify(ok), [ok]],
    [
      "a list with malformed entries",
      JSON.stringify([ok, 42, null, { requestId: "x" }, { ...ok, height: 1.5 }, { ...ok, eventId: 7 }]),
      [ok],
    ],
    ["an empty list", "[]", []],
    ["not JSON", "not json{", null],
    ["a number", "5", null],
    ["null", "null", null],
    ["an object that is no receipt", '{"height":"3"}', null],
  ])("%s", (_what, message, want) => {
    expect(decodeReceipts(message)).toEqual(want);
    // Agrees with the schema.
    const parsed = ((): unknown => {
      try {
        return JSON.parse(message);
      } catch {
        return undefined;
      }
    })();
    const schema = Array.isArray(parsed)
      ? parsed.filter((x) => Receipt.safeParse(x).success)
      : Receipt.safeParse(parsed).success
        ? [parsed]
        : null;
    expect(decodeReceipts(message)).toEqual(schema);
  });
});
