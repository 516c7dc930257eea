import { deadLetterSchema, subscriptionRecordSchemaOf } from "../openapi/reply-schemas.ts";
import { z } from "zod";
import type { Variant } from "@evb/domain";
import { groupErrors, groupIdParam, type OperationSchemas, TOPIC_NAME_ERRORS } from "../openapi/operation-schema.ts";
import { subscribeSettingParams } from "./settings-operation.schema.ts";

// The records are the reply schemas the client's types are held equal to (openapi/reply-schemas.ts).
const byId = (v: Variant) => z.record(z.string(), subscriptionRecordSchemaOf(v));
const nodeKey = z.string().describe("Gateway instance ip:port");

export const subscriptionOperationSchemas: OperationSchemas = {
  "rest/subscribe": {
    tag: "subscriptions",
    summary: "Subscribe a callback URL to a topic or a +/# pattern (M, E)",
    description:
      "Checks in order: URL format (100501), a TCP connection to the URL (100502; with `verify`: 100515 for a refused address, and none with verify=false), the group, the subscriptionId format (100505), the topic or pattern, the optional settings (100513, 100514; an alertUrl whose host the callback policy refuses: 100502), continuation of a live id (100108), then the caller's cap of live subscriptions (100510, MAX_SUBSCRIPTIONS_PER_CALLER; not the original's). Answers the id as raw text.",
    params: (v) =>
      z.object({
        topic: z.string().describe("A topic name or an MQTT-style pattern (`+` one level, `#` the rest); send `+` as %2B and `#` as %23"),
        url: z.string().describe("Callback URL (http or https) the notifier POSTs each event to"),
        subscriptionId: z.string().optional().describe("Empty for a new subscription; a previous id (a UUID) to continue it"),
        groupId: groupIdParam(v),
        verify: z
          .string()
          .optional()
          .describe(
            "Not the original's. Absent: the original's check (a TCP connection to the URL; 100502 for any failure). true: the same, but 100515 for an address the callback policy refuses. false: the policy only (100515), a receiver down now is accepted. Else 100516",
          ),
        ...subscribeSettingParams,
      }),
    reply: () => z.uuid(),
    replyKind: "text",
    errors: (v) => [
      "URL_INVALID",
      "URL_CONNECT_FAILED",
      "URL_NOT_ALLOWED",
      "VERIFY_INVALID",
      ...groupErrors(v),
      "SUBSCRIPTION_ID_FORMAT",
      ...TOPIC_NAME_ERRORS,
      "PATTERN_INVALID",
      "SETTING_INVALID",
      "SETTING_CONFLICT",
      "BODY_MODE_INVALID",
      "FILTER_INVALID",
      v === "E" ? "TOPIC_MISMATCH_E" : "TOPIC_MISMATCH_M",
    ],
  },
  "rest/unSubscribe": {
    tag: "subscriptions",
    summary: "End a subscription (M, E)",
    params: () => z.object({ subscriptionId: z.string().describe("The id subscribe answered; blank answers 100503, unknown 100504") }),
    reply: () => z.literal(true),
    errors: () => ["SUBSCRIPTION_ID_BLANK", "SUBSCRIPTION_ID_NOT_EXIST"],
  },
  "admin/listSubscription": {
    tag: "subscriptions",
    summary: "Subscriptions per gateway instance with their counters",
    description: "L: node → array of records; M: node → records by id; E: every node that owns subscriptions → records by id.",
    params: (v) => {
      const nodes = z.string().describe("Comma-separated gateway instances (ip:port)");
      if (v === "L") return z.object({ nodeInstances: nodes.describe("Required; blank answers 200001"), groupId: groupIdParam(v) });
      if (v === "M")
        return z.object({
          nodeIp: nodes.describe("Required (or its alias nodeInstances); blank answers -1"),
          nodeInstances: nodes.optional().describe("Alias of nodeIp"),
          groupId: groupIdParam(v),
        });
      return z.object({ groupId: groupIdParam(v) });
    },
    reply: (v) => z.record(nodeKey, v === "L" ? z.array(subscriptionRecordSchemaOf(v)) : byId(v)),
    errors: (v) => [
      ...(v === "L" ? (["INVALID_INPUT_PARAM"] as const) : v === "M" ? (["NODE_IP_LIST_NULL"] as const) : []),
      ...groupErrors(v),
    ],
  },
  "admin/innerListSubscription": {
    tag: "subscriptions",
    summary: "This gateway's own subscriptions by id (node-to-node)",
    description: "Enveloped as a REST reply: in L only. M requires groupId.",
    params: (v) => z.object({ groupId: v === "M" ? z.string().describe("Required in M") : groupIdParam(v) }),
    reply: byId,
    errors: groupErrors,
  },
  "admin/deadLetters": {
    tag: "dead letters",
    summary: "Subscriptions suspended after the retry budget of their head event ran out (extension)",
    params: (v) => z.object({ groupId: groupIdParam(v) }),
    reply: () => z.array(deadLetterSchema),
    errors: groupErrors,
  },
  "admin/replayDeadLetters": {
    tag: "dead letters",
    summary: "Resume one dead-lettered subscription, or all; or replay one from a time or an event; answers the ids released (extension)",
    description:
      "With `fromTime` or `fromEventId` (one of them, and a subscriptionId; 100512 otherwise) the live subscription is replayed: its delivery cursor goes back to just before that event (the first sealed at or after the time), never forward, its backlog is refilled from there and every later event is delivered again, in order; a dead letter is released too. An id that is not live answers 100504.",
    params: () =>
      z.object({
        subscriptionId: z.string().optional().describe("One subscription; absent or blank: every dead-lettered one"),
        fromTime: z
          .string()
          .optional()
          .describe("Replay from the first event sealed at or after this time: epoch ms or ISO-8601 with a zone (100309 otherwise)"),
        fromEventId: z.string().optional().describe("Replay from this event of the subscription's group, inclusive"),
      }),
    reply: () => z.array(z.string()),
    errors: () => [
      "REPLAY_POSITION_INVALID",
      "SUBSCRIPTION_ID_NOT_EXIST",
      "TIME_INVALID",
      "EVENT_ID_ILLEGAL",
      "EVENT_ID_TOO_LONG",
      "EVENT_ID_NOT_EXIST",
    ],
  },
};
