import { z } from "zod";
import { adminTimestamp, groupErrors, groupIdParam, type OperationSchemas } from "../openapi/operation-schema.ts";
import { MAX_BATCH_CALLS } from "./batch-operation.ts";

const epochMs = z.int().min(0);

const callbackState = z.object({
  subscriptionId: z.string(),
  topicName: z.string().describe("The subscription's topic or pattern"),
  interfaceType: z.string(),
  url: z.string().describe("Whole only to the API key that owns the subscription; otherwise credentials hidden"),
  alertUrl: z
    .string()
    .nullable()
    .describe("Where alerts to the owner go (admin/subscriptionSettings, subscribe); null: none. Shown as `url` is"),
  nodeInstance: z.string(),
  state: z
    .enum(["paused", "suspended", "retrying", "delivering", "caught-up"])
    .describe(
      "paused: an operator paused it; suspended: dead-lettered until a replay; retrying: an attempt failed and is retried at nextAttemptAt; delivering: events wait, nothing failed; caught-up: nothing waits",
    ),
  catchingUp: z.boolean().describe("A resumed subscription whose missed events are still being refilled"),
  delivered: z.int().min(0),
  pending: z.int().min(0).describe("Events waiting in the backlog, the head included"),
  attempts: z.int().min(0).describe("Failed attempts in the current run"),
  lastError: z.string().nullable().describe("The last failed attempt's error while retrying or suspended"),
  createdAt: epochMs,
  createTimeStamp: adminTimestamp,
  lastDeliveredAt: epochMs.nullable().describe("Null before the first delivery"),
  lastDeliveredTimeStamp: adminTimestamp.nullable(),
  nextAttemptAt: epochMs.nullable().describe("When retrying: the next attempt"),
  nextAttemptTimeStamp: adminTimestamp.nullable(),
  failingSince: epochMs.nullable(),
  failingSinceTimeStamp: adminTimestamp.nullable(),
  deadAt: epochMs.nullable(),
});

const liveState = z.object({
  subscriptionId: z.string(),
  topicName: z.string(),
  interfaceType: z.string().describe("stomp or mqtt"),
  nodeInstance: z.string(),
  state: z.literal("live"),
  delivered: z.int().min(0),
  createdAt: epochMs,
  createTimeStamp: adminTimestamp,
  lastDeliveredAt: epochMs.nullable(),
  lastDeliveredTimeStamp: adminTimestamp.nullable(),
});

const historySample = z.object({
  at: epochMs.describe("When the sample was taken, on the sampling gateway's clock"),
  sealed: z.int().min(0).describe("Events in the group's ledger (admin/group/general's transactionCount)"),
  delivered: z.int().min(0).describe("The sum of the group's live subscriptions' delivered counters"),
  publishes: z
    .int()
    .min(0)
    .describe("Publishes answered in the group by every gateway of the deployment, counted since the counter started"),
});

const batchResult = z.union([
  z.object({ code: z.literal(0), data: z.unknown().describe("What the operation answers, without the variant's envelope") }),
  z.object({ code: z.int(), message: z.string().nullable() }).describe("The operation's broker error"),
  z
    .object({ status: z.union([z.literal(403), z.literal(404)]), message: z.string() })
    .describe("403: the key may not make this call; 404: no such read operation"),
]);

/**
 * admin/subscriptionStates (subscription-states-operation.ts), admin/metricsHistory
 * (metrics-history-operation.ts) and admin/batch (batch-operation.ts): what the web console reads.
 */
export const consoleOperationSchemas: OperationSchemas = {
  "admin/subscriptionStates": {
    tag: "subscriptions",
    summary: "Every live subscription of a group with where its delivery stands: delivering, retrying, suspended, paused (extension)",
    description:
      "Callback subscriptions first (oldest first), read from their rows, then live STOMP and MQTT subscriptions (`state: live`). `lastDeliveredAt` is null before the first delivery (listSubscription's notifyTimeStamp shows the creation time then).",
    params: (v) => z.object({ groupId: groupIdParam(v) }),
    reply: () => z.array(z.union([callbackState, liveState])),
    errors: (v) => groupErrors(v),
  },
  "admin/metricsHistory": {
    tag: "admin",
    summary:
      "The last hour of a group's growing totals (events sealed, callbacks delivered, publishes answered), sampled by the gateways (extension, used by the web console)",
    description:
      "One sample per CONSOLE_HISTORY_INTERVAL_MS (10 s by default), taken by one gateway of the deployment and kept in Redis for an hour; a rate is the difference of two samples over the time between them. `now` is this gateway's clock. When Redis does not answer in time, `available` is false and `samples` is empty.",
    params: (v) =>
      z.object({
        groupId: groupIdParam(v),
        since: z
          .string()
          .optional()
          .describe(
            "Samples taken at or after this time: epoch milliseconds or an ISO-8601 date-time with a zone; default (and at most) an hour ago; 100309 otherwise",
          ),
      }),
    reply: () =>
      z.object({
        intervalMs: z.int().min(1).describe("Time between two samples (CONSOLE_HISTORY_INTERVAL_MS)"),
        now: epochMs.describe("This gateway's clock when it answered"),
        available: z.boolean().describe("False when Redis did not answer: no sample could be read"),
        samples: z.array(historySample).describe("Oldest first"),
      }),
    errors: (v) => [...groupErrors(v), "TIME_INVALID"],
  },
  "admin/batch": {
    tag: "admin",
    summary: `Up to ${MAX_BATCH_CALLS} read operations in one request, each answered on its own (extension, used by the web console)`,
    description:
      "Each call passes the role and group checks it would pass alone. Only reads: operations that need the read role, and admin/deliveryAttempts and admin/eventDeliveries. Answers one result per call, in order.",
    params: () =>
      z.object({
        calls: z
          .string()
          .describe(
            `JSON: [{"op":"admin/group/general","params":{"groupId":"1"}}, …], 1–${MAX_BATCH_CALLS} calls; malformed answers the generic code`,
          ),
      }),
    reply: () => z.array(batchResult),
    errors: () => [],
  },
};
