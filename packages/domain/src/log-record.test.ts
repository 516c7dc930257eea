import { describe, expect, it } from "vitest";
import { decodeLogRecord, encodeLogRecord, type LogRecord } from "./log-record.ts";

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
