import { z } from "zod";

/**
 * The replies the published client (packages/client) types, as the zod schemas the OpenAPI
 * document shows. The client has no runtime dependency, so its types (packages/client/src/types.ts)
 * are written out by hand; test/client/reply-types.test.ts fails the typecheck when one of them
 * and the `z.infer` of its schema here differ.
 */

type Variant = "L" | "M" | "E";

const address = z.string().regex(/^0x[0-9a-f]{40}$/);
const hash = z.string().regex(/^0x[0-9a-f]{64}$/);
const epochMs = z.int().min(0).describe("Epoch milliseconds");

/** A local `yyyy-MM-dd HH:mm:ss` timestamp, as the admin operations show times. */
export const adminTimestamp = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

/** TopicInfo / TopicState of variant E: the four TopicInfo fields, with the contract address. */
export const topicInfoESchema = z.object({
  topicName: z.string(),
  topicAddress: address.nullable(),
  senderAddress: address,
  createdTimestamp: epochMs,
});

const topicStateMFields = {
  topicName: z.string(),
  topicAddress: z.null(),
  senderAddress: address,
  createdTimestamp: epochMs,
  sequenceNumber: z.int().min(0).describe("Events published to the topic"),
  blockNumber: z.int().min(0).describe("Block of the last event, 0 if none"),
};

/** TopicState / TopicInfo of variant M. */
export const topicStateMSchema = z.object(topicStateMFields);

/** TopicState / TopicInfo of variant L. */
export const topicStateLSchema = z.object({
  ...topicStateMFields,
  lastTimestamp: epochMs.describe("Time of the last event, 0 if none"),
  lastSender: z.null(),
  lastBlock: z.null(),
});

/** TopicState / TopicInfo in the variant's fields (rest/state, and rest/list's items). */
export function topicStateSchema(v: Variant) {
  return v === "E" ? topicInfoESchema : v === "M" ? topicStateMSchema : topicStateLSchema;
}

/** rest/list's page; `pageSize` is the number of items on the page in M and L, the requested size in E. */
export function topicPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ total: z.int().min(0), pageIndex: z.int().min(0), pageSize: z.int().min(0), topicInfoList: z.array(item) });
}

/** publish's reply (bare in every variant). */
export const sendResultSchema = z.object({
  status: z
    .enum(["SUCCESS", "TIMEOUT", "ERROR", "NO_PERMISSION"])
    .describe("Only SUCCESS promises the event is stored; TIMEOUT: it may still land"),
  topic: z.string().nullable(),
  eventId: z.string().nullable().describe("Set with SUCCESS only"),
});

/** One event's answer in rest/publishBatch's reply: its SendResult, or the broker error rest/publish would have answered for it. */
export const batchItemResultSchema = z.union([
  sendResultSchema,
  z.object({
    code: z.int().describe("The broker error's code, e.g. 100101 for a topic that does not exist"),
    message: z.string().nullable(),
  }),
]);

/** rest/publishBatch: one result per event, in the body's order. */
export const publishBatchReplySchema = z.array(batchItemResultSchema);

/** admin/getVersion ('' when unknown). */
export const versionInfoSchema = z.object({
  eventVersion: z.string(),
  gitCommitTimeStamp: z.string(),
  gitBranch: z.string(),
  gitCommitHash: z.string(),
});

/** admin/group/general. */
export const groupGeneralSchema = z.object({
  nodeCount: z.int().min(0),
  transactionCount: z.int().min(0),
  latestBlock: z.int().min(0),
});

/** One page of an admin listing (transList, blockList, nodeList, deliveryAttempts). */
export function adminPageSchema<T extends z.ZodType>(item: T) {
  return z.object({ total: z.int().min(0), pageIndex: z.int().nullable(), pageSize: z.int().nullable(), pageData: z.array(item) });
}

export const transactionRecordSchema = z.object({
  transHash: hash,
  transFrom: address,
  transTo: address,
  blockNumber: z.int().min(1),
  blockTimestamp: adminTimestamp,
  createTime: z.null(),
  modifyTime: z.null(),
});

export const blockRecordSchema = z.object({
  pkHash: hash,
  blockNumber: z.int().min(1),
  blockTimestamp: adminTimestamp,
  transCount: z.int().min(0),
  sealerIndex: z.int().min(0),
  sealer: z
    .string()
    .regex(/^0x[0-9a-f]+$/)
    .describe("sealerIndex in hex"),
  createTime: z.null(),
  modifyTime: z.null(),
});

export const nodeRecordSchema = z.object({
  nodeId: z.string(),
  nodeName: z.null(),
  nodeType: z.literal("sealer"),
  blockNumber: z.int().nullable(),
  pbftView: z.null(),
  nodeActive: z.union([z.literal(0), z.literal(1)]).describe("1 while the node is alive"),
  createTime: z.null(),
  modifyTime: z.null(),
});

/** E's admin/blockchaininfo: the latest block and the chain nodes. */
export const blockchainInfoSchema = z.object({
  blockNumber: z.int().min(0),
  nodeIdList: z.array(z.string()),
  nodeIpList: z.array(z.string().regex(/^\[.*\]$/)),
});

/** L's admin/getContractContext. */
export const contractContextSchema = z.object({
  chainId: z.string(),
  blockNumber: z.int(),
  blockLimit: z.int(),
  topicAddress: address,
  gasLimit: z.int(),
  gasPrice: z.int(),
});

/** A decimal integer carried as a string (subscription counters). */
const decimalString = z.string().regex(/^\d+$/);

const subscriptionRecordEFields = {
  interfaceType: z.string().describe("`restful` for callback subscriptions"),
  notifiedEventCount: decimalString.describe("Events delivered"),
  notifyingEventCount: decimalString.describe("Events waiting"),
  notifyTimeStamp: adminTimestamp,
  topicName: z.string().describe("Topic or pattern"),
  subscribeId: z.string(),
};

/** A subscription as E lists it (admin/listSubscription, innerListSubscription): every value a string. */
export const subscriptionRecordESchema = z.object(subscriptionRecordEFields);

/** A subscription as L and M list it: E's six fields and three more. */
export const subscriptionRecordSchema = z.object({
  ...subscriptionRecordEFields,
  remoteIp: z.string(),
  createTimeStamp: adminTimestamp,
  groupId: z.string(),
});

/** The variant's Subscription record. */
export function subscriptionRecordSchemaOf(v: Variant) {
  return v === "E" ? subscriptionRecordESchema : subscriptionRecordSchema;
}

/** admin/deadLetters' item: a subscription whose delivery is suspended, its backlog kept. */
export const deadLetterSchema = z.object({
  subscriptionId: z.string(),
  topicName: z.string(),
  groupId: z.string(),
  url: z.string(),
  nodeInstance: z.string(),
  eventId: z.string().nullable().describe("The event that used up its retry budget"),
  attempts: z.int().min(0),
  lastError: z.string().nullable(),
  deadTimeStamp: adminTimestamp,
  notifyingEventCount: decimalString.describe("Events waiting, the head included"),
});

/** One attempt of the log, the event aside (admin/eventDeliveries shows them per subscription of one event). */
const attemptFields = {
  attemptTimeStamp: adminTimestamp,
  attemptTime: z.int().min(0).describe("Epoch milliseconds when the POST started"),
  durationMs: z.int().min(0),
  delivered: z.boolean(),
  httpStatus: z.int().nullable().describe("Null when no answer came back (refused, timed out, refused by the address policy)"),
  error: z.string().nullable().describe("Why the attempt failed; null when delivered"),
  excerpt: z.string().nullable().describe("The start of the receiver's answer body (at most 256 bytes)"),
};

/** admin/deliveryAttempts' item: one recorded callback attempt. */
export const deliveryAttemptSchema = z.object({ eventId: z.string(), ...attemptFields });

/** admin/eventDeliveries' item: one live subscription an event's topic matches, the event's state there and every attempt. */
export const eventDeliverySchema = z.object({
  subscriptionId: z.string(),
  topicName: z.string().describe("The subscription's topic or pattern"),
  url: z.string().describe("Whole only to the API key that owns the subscription"),
  state: z
    .enum(["delivered", "pending", "dead-lettered", "before-start"])
    .describe(
      "delivered: a 2xx is logged, or the cursor passed it after the subscription's start; pending: in the backlog or not matched yet; dead-lettered: the head of a suspended backlog; before-start: published before the subscription started (never matched)",
    ),
  resendsWaiting: z.int().min(0).describe("admin/resendEvent requests of this event not yet answered 2xx"),
  attempts: z.array(z.object(attemptFields)).describe("Every attempt at this event the log keeps, newest first (resends included)"),
});

/** admin/resendEvent's reply: the resend's number (its `webhook-id` ends `_resend<n>`). */
export const resendReceiptSchema = z.object({ subscriptionId: z.string(), eventId: z.string(), resend: z.int().min(1) });

/** admin/subscriptionSettings' reply: a subscription's own settings; null values are the deployment's. */
export const subscriptionSettingsSchema = z.object({
  subscriptionId: z.string(),
  paused: z.boolean(),
  pausedTimeStamp: adminTimestamp.nullable(),
  maxRate: z.number().nullable().describe("Null: no limit"),
  retryMaxAttempts: z.int().nullable().describe("Null: RETRY_MAX_ATTEMPTS"),
  retryBaseMs: z.int().nullable().describe("Null: RETRY_BASE_MS"),
  retryMaxMs: z.int().nullable().describe("Null: RETRY_MAX_MS"),
  deliveryWindow: z.int().nullable().describe("Null: DELIVERY_WINDOW"),
  signing: z.enum(["deployment", "own"]).describe("Whose secrets sign its callbacks: WEBHOOK_SECRETS, or its own"),
  previousSecretUntil: z.int().nullable().describe("Epoch ms until which the secret before the last rotation signs too"),
  alertUrl: z.string().nullable().describe("Where alerts to the owner go (subscription.failing, .suspended, .recovered); null: none"),
  headers: z.array(z.string()).nullable().describe("The names of its custom headers (values are never shown); null: none"),
  filter: z
    .array(z.record(z.string(), z.unknown()))
    .nullable()
    .describe("Its content filter, the conditions as given; null: every event of its topic"),
  bodyMode: z.enum(["envelope", "raw"]).describe("envelope: the original's callback body; raw: the published content as the body"),
  secret: z.string().optional().describe("The new signing secret (`whsec_…`): only in the answer of the rotation that made it"),
});

/**
 * What admin/events adds to the variant's Event: its block and seal time. The Event itself is
 * the broker's (this module has none): the gateway extends its wire Event schema with these.
 */
export const listedEventFieldsSchema = z.object({
  blockNumber: z.int().min(1),
  eventTime: z.int().min(0).describe("The block's seal time, epoch ms"),
  eventTimeStamp: adminTimestamp,
});
