import { BrokerError } from "@evb/domain";
import type { Params } from "../http/params.ts";

export interface AdminPaging {
  /** Counted from 1; null when sent empty. */
  pageNumber: number | null;
  pageSize: number | null;
}

/**
 * `pageNumber` and `pageSize` as the framework binds them, before any check of the operation:
 * absent is the missing-parameter error, not an integer is the type-mismatch error, empty is
 * null (behaviour.md 1.5).
 */
export function bindAdminPaging(params: Params): AdminPaging {
  return { pageNumber: params.requiredInt("pageNumber"), pageSize: params.requiredInt("pageSize") };
}

/**
 * The range checks of transList and blockList (behaviour.md 9.3 steps 2–3): a negative or empty
 * page number is 100104, a size outside 1–100 is 100107. Page 0 passes here and fails later as
 * `pageIndex error.`, as in the original.
 */
export function checkAdminPaging(p: AdminPaging): { pageNumber: number; pageSize: number } {
  if (p.pageNumber === null || p.pageNumber < 0) throw BrokerError.of("PAGE_INDEX_INVALID");
  if (p.pageSize === null || p.pageSize < 1 || p.pageSize > 100) throw BrokerError.of("PAGE_SIZE_INVALID");
  return { pageNumber: p.pageNumber, pageSize: p.pageSize };
}

/** The admin page wrapper, keys in the original's order. */
export function adminPage(total: number, pageIndex: number | null, pageSize: number | null, pageData: unknown[]) {
  return { total, pageIndex, pageSize, pageData };
}
