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

describe("log record idempotency", () => {
  const idempotency = { key: "order-17", retentionMs: 86_400_000 };

  it("carries the key and its retention; a record without one encodes as before", () => {
    expect(decodeLogRecord(encodeLogRecord({ ...base, idempotency }))).toEqual({ ok: true, record: { ...base, idempotency } });
    expect(encodeLogRecord(base).toString()).not.toContain("idempotency");
  });

  it("drops a malformed key, never the record (it is then sealed as without a key)", () => {
    for (const bad of [
      { key: "" },
      { key: "k".repeat(256), retentionMs: 1 },
      { key: "k", retentionMs: -1 },
      { key: "k", retentionMs: 1e300 },
      "k",
      7,
    ]) {
      const r = decodeLogRecord(Buffer.from(JSON.stringify({ ...base, idempotency: bad })));
      expect(r).toEqual({ ok: true, record: { ...base, idempotency: undefined } });
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
    [
      "keyed answers, and one with an unknown outcome",
      JSON.stringify([
        { ...ok, idempotency: "duplicate" },
        { ...ok, idempotency: "conflict" },
        { ...ok, idempotency: "other" },
      ]),
      [
        { ...ok, idempotency: "duplicate" },
        { ...ok, idempotency: "conflict" },
      ],
    ],
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
