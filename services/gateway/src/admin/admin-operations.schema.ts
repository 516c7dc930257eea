import { z } from "zod";
import {
  adminPagingParams,
  adminTimestamp,
  chainQueryErrors,
  groupErrors,
  groupIdParam,
  noParams,
  type OperationSchemas,
} from "../openapi/operation-schema.ts";

const hash = z.string().regex(/^0x[0-9a-f]{64}$/);
const address = z.string().regex(/^0x[0-9a-f]{40}$/);

function adminPage<T extends z.ZodType>(item: T) {
  return z.object({ total: z.int().min(0), pageIndex: z.int().nullable(), pageSize: z.int().nullable(), pageData: z.array(item) });
}

const transactionRecord = z.object({
  transHash: hash,
  transFrom: address,
  transTo: address,
  blockNumber: z.int().min(1),
  blockTimestamp: adminTimestamp,
  createTime: z.null(),
  modifyTime: z.null(),
});

const blockRecord = z.object({
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

const nodeRecord = z.object({
  nodeId: z.string(),
  nodeName: z.null(),
  nodeType: z.literal("sealer"),
  blockNumber: z.int().nullable(),
  pbftView: z.null(),
  nodeActive: z.union([z.literal(0), z.literal(1)]).describe("1 while the node is alive"),
  createTime: z.null(),
  modifyTime: z.null(),
});

const blockFilter = {
  blockNumber: z.int().optional().describe("One block by height"),
};

/** Admin operations of admin-operations.ts (general, chain, node and group ones). */
export const adminOperationSchemas: OperationSchemas = {
  "admin/getVersion": {
    tag: "admin",
    summary: "Broker version and git facts ('' when unknown)",
    params: noParams,
    reply: () => z.object({ eventVersion: z.string(), gitCommitTimeStamp: z.string(), gitBranch: z.string(), gitCommitHash: z.string() }),
    errors: () => [],
  },
  "admin/listGroup": {
    tag: "admin",
    summary: "Configured group ids",
    params: noParams,
    reply: () => z.array(z.string()),
    errors: () => [],
  },
  "admin/listNodes": {
    tag: "admin",
    summary: "Live gateway instances as ip:port",
    params: noParams,
    reply: () => z.array(z.string()),
    errors: () => [],
  },
  "admin/group/general": {
    tag: "admin",
    summary: "Chain totals of a group",
    params: (v) => z.object({ groupId: groupIdParam(v) }),
    reply: () => z.object({ nodeCount: z.int().min(0), transactionCount: z.int().min(0), latestBlock: z.int().min(0) }),
    errors: (v) => [...groupErrors(v), ...chainQueryErrors(v)],
  },
  "admin/transaction/transList": {
    tag: "admin",
    summary: "Transactions of one block (the latest unless a filter names one), one page",
    description: "`transactionHash` names a BLOCK by its hash, as in the original. A block without transactions answers 200214.",
    params: (v) =>
      z.object({
        ...adminPagingParams,
        groupId: groupIdParam(v),
        ...blockFilter,
        transactionHash: z.string().optional().describe("A block hash (sic)"),
      }),
    reply: () => adminPage(transactionRecord),
    errors: (v) => [...groupErrors(v), "PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", "RPC_FAILED", "PAGE_INDEX_ERROR", ...chainQueryErrors(v)],
  },
  "admin/block/blockList": {
    tag: "admin",
    summary: "Blocks, page n covering heights (n−1)·size+1 … n·size, newest first; or the one block a filter names",
    params: (v) =>
      z.object({ ...adminPagingParams, groupId: groupIdParam(v), ...blockFilter, pkHash: z.string().optional().describe("A block hash") }),
    reply: () => adminPage(blockRecord),
    errors: (v) => [...groupErrors(v), "PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", "RPC_FAILED", "PAGE_INDEX_ERROR", ...chainQueryErrors(v)],
  },
  "admin/node/nodeList": {
    tag: "admin",
    summary: "Every chain node (indexer) of a group; paging is echoed, not applied",
    params: (v) =>
      z.object({
        pageNumber: z.int().describe("Required, echoed"),
        pageSize: z.int().describe("Required, echoed"),
        groupId: groupIdParam(v),
      }),
    reply: () => adminPage(nodeRecord),
    errors: (v) => [...groupErrors(v), "RPC_FAILED", ...chainQueryErrors(v)],
  },
  "admin/blockchaininfo": {
    tag: "admin",
    summary: "Latest block and chain nodes (E)",
    params: (v) => z.object({ groupId: groupIdParam(v) }),
    reply: () =>
      z.object({ blockNumber: z.int().min(0), nodeIdList: z.array(z.string()), nodeIpList: z.array(z.string().regex(/^\[.*\]$/)) }),
    errors: groupErrors,
  },
  "admin/validateGroupId": {
    tag: "admin",
    summary: "Whether a group is configured (L); a blank id is not defaulted",
    params: () => z.object({ groupId: z.string().describe("Required; unknown or blank answers 200211") }),
    reply: () => z.literal("SUCCESS"),
    errors: () => ["UNKNOWN_GROUP"],
  },
  "admin/getContractContext": {
    tag: "admin",
    summary: "Storage parameters for externally signed publishes (L)",
    params: (v) => z.object({ groupId: groupIdParam(v) }),
    reply: () =>
      z.object({
        chainId: z.string(),
        blockNumber: z.int(),
        blockLimit: z.int(),
        topicAddress: address,
        gasLimit: z.int(),
        gasPrice: z.int(),
      }),
    errors: groupErrors,
  },
};
