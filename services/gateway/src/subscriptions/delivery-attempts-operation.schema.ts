import { z } from "zod";
import { adminTimestamp, type OperationSchemas } from "../openapi/operation-schema.ts";

/** One attempt of the log, the event aside (admin/eventDeliveries shows them per subscription of one event). */
export const attemptFields = {
  attemptTimeStamp: adminTimestamp,
  attemptTime: z.int().min(0).describe("Epoch milliseconds when the POST started"),
  durationMs: z.int().min(0),
  delivered: z.boolean(),
  httpStatus: z.int().nullable().describe("Null when no answer came back (refused, timed out, refused by the address policy)"),
  error: z.string().nullable().describe("Why the attempt failed; null when delivered"),
  excerpt: z.string().nullable().describe("The start of the receiver's answer body (at most 256 bytes)"),
};

const attempt = z.object({ eventId: z.string(), ...attemptFields });

/** admin/deliveryAttempts (delivery-attempts-operation.ts). */
export const deliveryAttemptsOperationSchemas: OperationSchemas = {
  "admin/deliveryAttempts": {
    tag: "dead letters",
    summary: "A subscription's recorded callback attempts, newest first (extension)",
    params: () =>
      z.object({
        subscriptionId: z.string().describe("Required; blank answers 100503, unknown 100504"),
        pageNumber: z.int().min(1).optional().describe("Counted from 1 (default 1); below 1 answers 100104"),
        pageSize: z.int().min(1).max(100).optional().describe("1–100 (default 20; 100107 otherwise)"),
      }),
    reply: () => z.object({ total: z.int().min(0), pageIndex: z.int().min(1), pageSize: z.int().min(1), pageData: z.array(attempt) }),
    errors: () => ["SUBSCRIPTION_ID_BLANK", "PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", "SUBSCRIPTION_ID_NOT_EXIST"],
  },
};
