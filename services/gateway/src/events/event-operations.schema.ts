import { z } from "zod";
import { BROKER_ERRORS, IDEMPOTENCY_KEY_MAX_LENGTH, type Variant } from "@evb/domain";
import {
  groupErrors,
  groupIdParam,
  type OperationSchemas,
  TOPIC_NAME_ERRORS,
  topicParam,
  topicStorageErrors,
} from "../openapi/operation-schema.ts";

const base64 = z
  .string()
  .regex(/^[A-Za-z0-9+/]*={0,2}$/)
  .describe("Standard Base64 of the content's UTF-8 bytes");
const eventId = z.string().describe("`<first 8 hex of sha256(topic)>-<sequence>-<block>`");
const idempotencyKey = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .regex(/^[\x21-\x7e]+$/)
  .optional();

/** The Event of getEvent and of callbacks: E has no extensions; L adds `event-plus`, a JSON string. */
function eventSchema(v: Variant) {
  if (v === "E") return z.object({ topic: z.string(), content: base64, eventId });
  const extensions = z
    .record(z.string(), z.string())
    .describe(
      v === "L"
        ? 'The `event-*` parameters given to publish, plus `event-plus`: a JSON string `{"timestamp","height","txHash","sender"}`.'
        : "The `event-*` parameters given to publish.",
    );
  return z.object({ topic: z.string(), content: base64, extensions, eventId });
}

/** The body POSTed to a callback URL; subscriptions taken through E get E's Event shape. */
export function callbackBodySchema(v: "M" | "E") {
  return z.object({ subscriptionId: z.uuid(), event: eventSchema(v) });
}

const sendResult = z.object({
  status: z
    .enum(["SUCCESS", "TIMEOUT", "ERROR", "NO_PERMISSION"])
    .describe("Only SUCCESS promises the event is stored; TIMEOUT: it may still land"),
  topic: z.string().nullable(),
  eventId: z.string().nullable().describe("Set with SUCCESS only"),
});

export const eventOperationSchemas: OperationSchemas = {
  "rest/publish": {
    tag: "events",
    summary: "Publish one event; answers once it is sealed in a block",
    description:
      "Large content goes as a POST form body. Every `event-*` parameter becomes an extension. The SendResult is bare in every variant; errors take the variant's error shape. With an Idempotency-Key (header or `idempotencyKey`), a repeat of the same publish answers the first one's SendResult (docs/idempotency.md).",
    params: (v) =>
      z.object({
        topic: topicParam,
        content: z.string().min(1).max(10240).describe("Event content, at most 10240 UTF-16 code units; blank answers 100200."),
        groupId: groupIdParam(v),
        idempotencyKey: idempotencyKey.describe(
          "Not the original's, and not an extension: the same as the Idempotency-Key header, for clients that cannot set headers (both given must be equal).",
        ),
      }),
    headers: z.object({
      "Idempotency-Key": idempotencyKey.describe(
        `Not the original's: names the publish, so that a repeat with the same topic, content and extensions within IDEMPOTENCY_RETENTION_MS (24 h by default) of the first event's seal answers that event's SendResult again and stores nothing; with other content it answers ${BROKER_ERRORS.IDEMPOTENCY_KEY_REUSED.code}. Absent: every publish is a new event (docs/idempotency.md).`,
      ),
    }),
    extensions: true,
    reply: () => sendResult,
    replyKind: "bare",
    errors: (v) => [
      "URL_INVALID",
      ...groupErrors(v),
      ...TOPIC_NAME_ERRORS,
      "CONTENT_BLANK",
      "CONTENT_TOO_LONG",
      "EXTENSIONS_TOO_LONG",
      "IDEMPOTENCY_KEY_INVALID",
      "TOPIC_NOT_EXIST",
      "IDEMPOTENCY_KEY_REUSED",
      ...topicStorageErrors(v),
    ],
  },
  "rest/getEvent": {
    tag: "events",
    summary: "Read one event by id",
    params: (v) =>
      z.object({
        eventId: z.string().max(64).describe("An id publish answered; blank or malformed answers 100302, longer than 64 100301."),
        groupId: groupIdParam(v),
      }),
    reply: eventSchema,
    errors: (v) => [
      ...groupErrors(v),
      "EVENT_ID_ILLEGAL",
      "EVENT_ID_TOO_LONG",
      "HEIGHT_READ_FAILED",
      "EVENT_ID_MISMATCH",
      "EVENT_ID_NOT_EXIST",
      ...(v === "E" ? [] : (["TRANSACTION_TIMEOUT"] as const)),
    ],
  },
};
