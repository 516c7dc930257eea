import { describe, expect, it } from "vitest";
import { BrokerError } from "@evb/domain";
import { checkAdminPaging } from "./admin-paging.ts";

const codeOf = (fn: () => unknown): number | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof BrokerError ? err.code : Number.NaN;
  }
};

describe("checkAdminPaging (transList, blockList)", () => {
  it("rejects a negative or empty page number with 100104 before looking at the size", () => {
    expect(codeOf(() => checkAdminPaging({ pageNumber: -1, pageSize: 0 }))).toBe(100104);
    expect(codeOf(() => checkAdminPaging({ pageNumber: null, pageSize: 10 }))).toBe(100104);
  });

  it("accepts sizes 1 and 100 and rejects 0, 101 and empty with 100107", () => {
    expect(checkAdminPaging({ pageNumber: 1, pageSize: 1 })).toEqual({ pageNumber: 1, pageSize: 1 });
    expect(checkAdminPaging({ pageNumber: 1, pageSize: 100 })).toEqual({ pageNumber: 1, pageSize: 100 });
    for (const pageSize of [0, 101, null]) expect(codeOf(() => checkAdminPaging({ pageNumber: 1, pageSize }))).toBe(100107);
  });

  it("lets page 0 through: it fails later as -1 pageIndex error.", () => {
    expect(checkAdminPaging({ pageNumber: 0, pageSize: 10 })).toEqual({ pageNumber: 0, pageSize: 10 });
  });
});
