import { describe, expect, it } from "vitest";
import { isStorageTimeout } from "./pool.ts";

describe("isStorageTimeout", () => {
  it("knows pg's words for a query, a connect and a pool wait that ran out of time, and a cancelled statement", () => {
    expect(isStorageTimeout(new Error("Query read timeout"))).toBe(true);
    expect(isStorageTimeout(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isStorageTimeout(new Error("Connection terminated due to connection timeout"))).toBe(true);
    expect(isStorageTimeout(Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" }))).toBe(true);
  });

  it("does not take other failures, or other libraries' timeouts, for a storage timeout", () => {
    expect(isStorageTimeout(new Error("connect ECONNREFUSED 127.0.0.1:5432"))).toBe(false);
    expect(isStorageTimeout(new Error("Connection terminated unexpectedly"))).toBe(false);
    expect(isStorageTimeout(new Error("Connection timeout"))).toBe(false); // kafkajs
    expect(isStorageTimeout(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    expect(isStorageTimeout("Query read timeout")).toBe(false);
  });
});
