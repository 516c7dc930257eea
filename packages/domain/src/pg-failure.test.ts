import { describe, expect, it } from "vitest";
import { classifyPgFailure } from "./pg-failure.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("classifyPgFailure", () => {
  it.each([
    { name: "query past query_timeout", err: new Error("Query read timeout"), want: "STORAGE_TIMEOUT" },
    { name: "no pooled connection in time", err: new Error("timeout exceeded when trying to connect"), want: "STORAGE_TIMEOUT" },
    { name: "connect past its timeout", err: new Error("Connection terminated due to connection timeout"), want: "STORAGE_TIMEOUT" },
    { name: "statement_timeout", err: withCode("canceling statement due to statement timeout", "57014"), want: "STORAGE_TIMEOUT" },
    { name: "refused connection", err: withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"), want: "STORAGE_UNAVAILABLE" },
    { name: "dropped connection", err: new Error("Connection terminated unexpectedly"), want: "STORAGE_UNAVAILABLE" },
    {
      name: "server shutting down",
      err: withCode("terminating connection due to administrator command", "57P01"),
      want: "STORAGE_UNAVAILABLE",
    },
    { name: "connection failure class 08", err: withCode("connection failure", "08006"), want: "STORAGE_UNAVAILABLE" },
    { name: "unique violation", err: withCode("duplicate key", "23505"), want: "STORAGE_REJECTED" },
    { name: "missing table", err: withCode('relation "x" does not exist', "42P01"), want: "STORAGE_REJECTED" },
    { name: "not an Error", err: "Query read timeout", want: null },
  ])("$name: $want", ({ err, want }) => {
    expect(classifyPgFailure(err)).toBe(want);
  });
});
