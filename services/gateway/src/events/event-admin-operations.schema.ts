import { eventDeliverySchema, listedEventFieldsSchema, resendReceiptSchema } from "../openapi/reply-schemas.ts";
import { z } from "zod";
import { type BrokerErrorName, type Variant, wireEventSchema } from "@evb/domain";
import { groupErrors, groupIdParam, type OperationSchemas, TOPIC_NAME_ERRORS } from "../openapi/operation-schema.ts";

const EVENT_ID_ERRORS: readonly BrokerErrorName[] = ["EVENT_ID_ILLEGAL", "EVENT_ID_TOO_LONG"];

const paging = {
  pageNumber: z.int().min(1).optional().describe("Counted from 1 (default 1); below 1 answers 100104"),
  pageSize: z.int().min(1).max(100).optional().describe("1–100 (default 20; 100107 otherwise)"),
};

const time = z
  .string()
  .optional()
  .describe("Epoch milliseconds, or an ISO-8601 date-time with a zone (`2026-05-01T10:00:00Z`); a block's seal time; 100309 otherwise");

function page<T extends z.ZodType>(item: T, total: string) {
  return z.object({ total: z.int().min(0).describe(total), pageIndex: z.int().min(1), pageSize: z.int().min(1), pageData: z.array(item) });
}

// The items are the reply schemas the client's types are held equal to (openapi/reply-schemas.ts).
const eventRecord = (v: Variant) => wireEventSchema(v).extend(listedEventFieldsSchema.shape);

const storageErrors = (v: Variant): BrokerErrorName[] => (v === "E" ? [] : ["TRANSACTION_TIMEOUT"]);

/** admin/events, admin/eventDeliveries (event-admin-operations.ts) and admin/resendEvent (resend-operation.ts). */
export const eventAdminOperationSchemas: OperationSchemas = {
  "admin/events": {
    tag: "events",
    summary: "Events of a group by topic or +/# pattern, time range and eventId, with their content; newest first (extension)",
    description:
      "Ledger order, newest first ((block, index) descending). Needs a topic, a pattern, an eventId, or both `from` and `to` (100308 otherwise); a page past the first 10000 matches, or a pattern over more than 1000 topics, answers 100310. `total` counts at most 10000.",
    params: (v) =>
      z.object({
        topic: z.string().optional().describe("A topic name, or a pattern (`+` one level, `#` the rest); send them as %2B and %23"),
        eventId: z.string().optional().describe("One event"),
        from: time,
        to: time,
        groupId: groupIdParam(v),
        ...paging,
      }),
    reply: (v) => page(eventRecord(v), "Matches, counted up to 10000"),
    errors: (v) => [
      ...groupErrors(v),
      "PAGE_INDEX_INVALID",
      "PAGE_SIZE_INVALID",
      ...TOPIC_NAME_ERRORS,
      "PATTERN_INVALID",
      ...EVENT_ID_ERRORS,
      "TIME_INVALID",
      "EVENT_SEARCH_UNBOUNDED",
      "EVENT_SEARCH_TOO_WIDE",
      ...storageErrors(v),
    ],
  },
  "admin/eventDeliveries": {
    tag: "events",
    summary: "One event's deliveries: each live subscription its topic matches, the event's state there and every attempt (extension)",
    params: (v) => z.object({ eventId: z.string().describe("Required"), groupId: groupIdParam(v), ...paging }),
    reply: () => page(eventDeliverySchema, "Live subscriptions that match the event's topic"),
    errors: (v) => [
      ...groupErrors(v),
      "PAGE_INDEX_INVALID",
      "PAGE_SIZE_INVALID",
      ...EVENT_ID_ERRORS,
      "EVENT_ID_NOT_EXIST",
      ...storageErrors(v),
    ],
  },
  "admin/resendEvent": {
    tag: "dead letters",
    summary: "Send one event again to one subscription, out of order, marked `webhook-resend: true` (extension)",
    description:
      "The notifier sends it through its normal delivery (signing, address checks, retries, attempt log) before the subscription's backlog, at least once, with `webhook-id` `msg_<subscriptionId>_<eventId>_resend<n>`. Answers the resend's number.",
    params: () =>
      z.object({
        subscriptionId: z.string().describe("A live subscription; blank answers 100503, unknown or ended 100504"),
        eventId: z.string().describe("An event of the subscription's group that its topic or pattern matches (100511 otherwise)"),
      }),
    reply: () => resendReceiptSchema,
    errors: (v) => [
      "SUBSCRIPTION_ID_BLANK",
      "SUBSCRIPTION_ID_NOT_EXIST",
      ...EVENT_ID_ERRORS,
      "EVENT_ID_NOT_EXIST",
      "EVENT_NOT_MATCHED",
      ...storageErrors(v),
    ],
  },
};
