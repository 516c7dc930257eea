import { z } from "zod";
import type { BrokerErrorName, Variant } from "@evb/domain";

/**
 * The declarative description of one operation, for the OpenAPI document only: validation stays
 * in the operation's handler, in the reference's order, and these schemas never run on a
 * request. Each `*.schema.ts` file beside the operations exports a map of them by path.
 */
export interface OperationSchema {
  summary: string;
  description?: string;
  tag: "topics" | "events" | "subscriptions" | "admin" | "dead letters";
  /** The request parameters in variant `v` (query string or form body); keys are parameter names. */
  params: (v: Variant) => z.ZodObject;
  /** Whether `params` are the fields of a JSON request body (rest/publishBatch) rather than query or form parameters. */
  jsonBody?: boolean;
  /** Whether `event-*` parameters become extensions (publish). */
  extensions?: boolean;
  /** Request headers the operation reads (publish's Idempotency-Key); keys are header names. */
  headers?: z.ZodObject;
  /** The success payload in variant `v`, before the variant's envelope is applied. */
  reply: (v: Variant) => z.ZodType;
  /**
   * How the payload is sent: `data` in the variant's envelope where it has one (the default),
   * `bare` as is in every variant (publish's SendResult), `text` as raw text/plain (subscribe).
   */
  replyKind?: "data" | "bare" | "text";
  /** The broker errors variant `v` can answer, besides the generic code every operation can answer. */
  errors: (v: Variant) => readonly BrokerErrorName[];
}

export type OperationSchemas = Readonly<Record<string, OperationSchema>>;

/** The group rules (behaviour.md 4): E also refuses a non-integer id with 100306. */
export function groupErrors(v: Variant): BrokerErrorName[] {
  return v === "E" ? ["GROUP_ID_INVALID", "UNKNOWN_GROUP"] : ["UNKNOWN_GROUP"];
}

/** What a topic name can fail (behaviour.md 5.1). */
export const TOPIC_NAME_ERRORS: readonly BrokerErrorName[] = ["TOPIC_BLANK", "TOPIC_TOO_LONG", "TOPIC_INVALID_CHAR"];

/** Storage failures of the topic operations and publish: E 200202, M and L 200201 on a timeout. */
export function topicStorageErrors(v: Variant): BrokerErrorName[] {
  return v === "E" ? ["TRANSACTION_FAILED"] : ["TRANSACTION_TIMEOUT"];
}

/** Storage failures of the admin chain queries: M and L 200201 on a timeout, else 200214. */
export function chainQueryErrors(v: Variant): BrokerErrorName[] {
  return v === "E" ? [] : ["TRANSACTION_TIMEOUT", "RPC_FAILED"];
}

export const groupIdParam = (v: Variant) =>
  (v === "E" ? z.string().regex(/^\s*$|^[+-]?\d+$/) : z.string())
    .optional()
    .describe(
      'Group id; absent or blank means "1". An id that is not configured answers 200211' +
        (v === "E" ? "; in E a non-integer id answers 100306." : "."),
    );

export const topicParam = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[\x20-\x22\x24-\x2A\x2C-\x80]*[\x20-\x22\x24-\x2A\x2C-\x2E\x30-\x80]$/)
  .describe(
    "Topic name: at most 64 UTF-16 code units, code units 32–128 only, no `+` or `#`, no trailing `/`. Checked in the order blank (100103), length (100102), characters (100106).",
  );

export const pageSizeParam = z.int().min(1).max(100).describe("Page size, 1–100 (100107 otherwise).");

export const adminPagingParams = {
  pageNumber: z.int().min(0).describe("Page number counted from 1; below 0 or empty answers 100104; 0 or a page past the data answers -1."),
  pageSize: pageSizeParam,
};

/** Timestamps of the admin API: local `yyyy-MM-dd HH:mm:ss` (the client's reply schemas use the same). */
export { adminTimestamp } from "./reply-schemas.ts";

export const noParams = () => z.object({});
