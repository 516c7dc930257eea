import type { FailureKind } from "./failures.ts";

/** SQLSTATE classes and codes that mean "the server is not there or not answering". */
const UNAVAILABLE_CLASSES = ["08", "57P"];
/** query_canceled: a statement past statement_timeout. */
const QUERY_CANCELED = "57014";
/** node-postgres's own words for a query past query_timeout, no pooled connection in time, and a connect past its timeout. */
const PG_TIMEOUT_MESSAGES = new Set([
  "Query read timeout",
  "timeout exceeded when trying to connect",
  "Connection terminated due to connection timeout",
]);
/** Socket errors of a connection attempt or a dropped connection. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE"]);

/**
 * The one classifier of node-postgres failures: a timeout (STORAGE_TIMEOUT), the server out of
 * reach (STORAGE_UNAVAILABLE), or an answer refusing the statement (STORAGE_REJECTED). Anything
 * that is not an Error is not a pg failure (null).
 */
export function classifyPgFailure(err: unknown): FailureKind | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (code === QUERY_CANCELED || PG_TIMEOUT_MESSAGES.has(err.message)) return "STORAGE_TIMEOUT";
  if (typeof code === "string") {
    if (SOCKET_CODES.has(code) || UNAVAILABLE_CLASSES.some((c) => code.startsWith(c))) return "STORAGE_UNAVAILABLE";
    // A five-character SQLSTATE: the server answered.
    if (/^[0-9A-Z]{5}$/.test(code)) return "STORAGE_REJECTED";
  }
  return "STORAGE_UNAVAILABLE";
}
