import { publishBatchReplySchema, sendResultSchema } from "../openapi/reply-schemas.ts";
import { z } from "zod";
import { BROKER_ERRORS, IDEMPOTENCY_KEY_MAX_LENGTH, wireEventSchema } from "@evb/domain";
import {
  groupErrors,
  groupIdParam,
  type OperationSchemas,
  TOPIC_NAME_ERRORS,
  topicParam,
  topicStorageErrors,
} from "../openapi/operation-schema.ts";

const idempotencyKey = z
  .string()
  .min(1)
  .max(IDEMPOTENCY_KEY_MAX_LENGTH)
  .regex(/^[\x21-\x7e]+$/)
  .optional();

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
    reply: () => sendResultSchema,
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
  "rest/publishBatch": {
    tag: "events",
    summary: "Publish up to 1000 events in one JSON body; answers one result per event once each is sealed",
    description:
      "Not the original's. The body is JSON (`Content-Type` any), at most BODY_LIMIT_BYTES and 1048576 characters. Each event is checked as rest/publish checks one and answered in the body's order: its SendResult, or `{code, message}` for the error publish would have answered for it (100501 an event without string topic and content, 100102–100106, 100200, 100201, 100204, 100206, 100210, 100101, 100211; E's 200202 where L and M answer TIMEOUT or ERROR). Events are appended in order, so one topic's events keep the body's order in the ledger. Refused whole: a body that is not an object with 1–1000 events (100212), over the body limit (100213), an unknown group, an Idempotency-Key header (100210: each event carries its own `idempotencyKey`). With API keys each event counts against the key's publish rate (docs/publishing.md).",
    jsonBody: true,
    params: (v) =>
      z.object({
        groupId: groupIdParam(v),
        events: z
          .array(
            z.object({
              topic: topicParam,
              content: z.string().min(1).max(10240).describe("Text, at most 10240 UTF-16 code units; binary goes as Base64 text."),
              extensions: z
                .record(z.string().regex(/^event-/), z.string())
                .optional()
                .describe("At most 1024 characters rendered (100204)."),
              idempotencyKey: idempotencyKey.describe("This event's own Idempotency-Key (docs/idempotency.md)."),
            }),
          )
          .min(1)
          .max(1000),
      }),
    reply: () => publishBatchReplySchema,
    replyKind: "bare",
    errors: (v) => ["BATCH_INVALID", "BATCH_TOO_LARGE", "IDEMPOTENCY_KEY_INVALID", ...groupErrors(v), ...topicStorageErrors(v)],
  },
  "rest/getEvent": {
    tag: "events",
    summary: "Read one event by id",
    params: (v) =>
      z.object({
        eventId: z.string().max(64).describe("An id publish answered; blank or malformed answers 100302, longer than 64 100301."),
        groupId: groupIdParam(v),
      }),
    reply: wireEventSchema,
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
