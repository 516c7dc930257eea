import { deliveryAttemptSchema } from "../openapi/reply-schemas.ts";
import { z } from "zod";
import type { OperationSchemas } from "../openapi/operation-schema.ts";

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
    reply: () =>
      z.object({ total: z.int().min(0), pageIndex: z.int().min(1), pageSize: z.int().min(1), pageData: z.array(deliveryAttemptSchema) }),
    errors: () => ["SUBSCRIPTION_ID_BLANK", "PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", "SUBSCRIPTION_ID_NOT_EXIST"],
  },
};
