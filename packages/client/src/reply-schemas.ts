import { z } from "zod";

/**
 * The broker's replies as zod schemas, where the client and the gateway share them: the
 * gateway's OpenAPI document shows these (its `*.schema.ts` import them from
 * `@evb/client/reply-schemas`), and the client's reply types (types.ts) are their `z.infer`, so
 * the two cannot drift. This module imports zod and nothing of the gateway's.
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
