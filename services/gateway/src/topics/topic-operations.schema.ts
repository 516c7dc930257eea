import { topicPageSchema, topicStateSchema } from "../openapi/reply-schemas.ts";
import { z } from "zod";
import type { Variant } from "@evb/domain";
import {
  groupErrors,
  groupIdParam,
  type OperationSchemas,
  pageSizeParam,
  TOPIC_NAME_ERRORS,
  topicParam,
  topicStorageErrors,
} from "../openapi/operation-schema.ts";

// TopicState / TopicInfo (topic-view.ts) and the page are the client's reply schemas, which its types are inferred from.
const topicOnly = (v: Variant) => z.object({ topic: topicParam, groupId: groupIdParam(v) });
/** M and L check the group before the topic; E the topic first (except for state). */
const nameErrors = (v: Variant) => [...groupErrors(v), ...TOPIC_NAME_ERRORS];

export const topicOperationSchemas: OperationSchemas = {
  "rest/open": {
    tag: "topics",
    summary: "Create a topic (true also when it exists)",
    params: topicOnly,
    reply: () => z.literal(true),
    errors: (v) => [...nameErrors(v), ...(v === "E" ? [] : (["TRANSACTION_TIMEOUT"] as const)), "TRANSACTION_FAILED"],
  },
  "rest/close": {
    tag: "topics",
    summary: "Check that a topic exists (close changes nothing, as in the original)",
    params: topicOnly,
    reply: () => z.literal(true),
    errors: (v) => [...nameErrors(v), "TOPIC_NOT_EXIST", ...topicStorageErrors(v)],
  },
  "rest/exist": {
    tag: "topics",
    summary: "Whether a topic exists",
    params: topicOnly,
    reply: () => z.boolean(),
    errors: (v) => [...nameErrors(v), ...topicStorageErrors(v)],
  },
  "rest/state": {
    tag: "topics",
    summary: "A topic's state",
    params: topicOnly,
    reply: topicStateSchema,
    errors: (v) => [...nameErrors(v), "TOPIC_NOT_EXIST", ...topicStorageErrors(v)],
  },
  "rest/list": {
    tag: "topics",
    summary: "Topics of a group in creation order, one page",
    description:
      "Paging is checked before the group. `pageSize` in the reply is the number of items on the page in M and L, the requested size in E.",
    params: (v) =>
      z.object({
        pageIndex: z.int().min(0).describe("Page index counted from 0; negative or empty answers 100104."),
        pageSize: pageSizeParam,
        groupId: groupIdParam(v),
      }),
    reply: (v) => topicPageSchema(topicStateSchema(v)),
    errors: (v) => ["PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", ...groupErrors(v), ...topicStorageErrors(v)],
  },
};
