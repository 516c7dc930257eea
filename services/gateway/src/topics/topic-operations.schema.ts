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

const address = z.string().regex(/^0x[0-9a-f]{40}$/);
const epochMs = z.int().min(0).describe("Epoch milliseconds");

/** TopicState / TopicInfo in the variant's fields (topic-view.ts). */
function topicStateSchema(v: Variant) {
  if (v === "E") {
    return z.object({ topicName: z.string(), topicAddress: address.nullable(), senderAddress: address, createdTimestamp: epochMs });
  }
  const m = {
    topicName: z.string(),
    topicAddress: z.null(),
    senderAddress: address,
    createdTimestamp: epochMs,
    sequenceNumber: z.int().min(0).describe("Events published to the topic"),
    blockNumber: z.int().min(0).describe("Block of the last event, 0 if none"),
  };
  if (v === "M") return z.object(m);
  return z.object({
    ...m,
    lastTimestamp: epochMs.describe("Time of the last event, 0 if none"),
    lastSender: z.null(),
    lastBlock: z.null(),
  });
}

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
    reply: (v) =>
      z.object({ total: z.int().min(0), pageIndex: z.int().min(0), pageSize: z.int().min(0), topicInfoList: z.array(topicStateSchema(v)) }),
    errors: (v) => ["PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", ...groupErrors(v), ...topicStorageErrors(v)],
  },
};
