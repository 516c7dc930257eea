import {
  adminPageSchema,
  blockchainInfoSchema,
  blockRecordSchema,
  contractContextSchema,
  groupGeneralSchema,
  nodeRecordSchema,
  transactionRecordSchema,
  versionInfoSchema,
} from "../openapi/reply-schemas.ts";
import { z } from "zod";
import {
  adminPagingParams,
  chainQueryErrors,
  groupErrors,
  groupIdParam,
  noParams,
  type OperationSchemas,
} from "../openapi/operation-schema.ts";

// The replies are the reply schemas the client's types are held equal to (openapi/reply-schemas.ts).

const blockFilter = {
  blockNumber: z.int().optional().describe("One block by height"),
};

/** Admin operations of admin-operations.ts (general, chain, node and group ones). */
export const adminOperationSchemas: OperationSchemas = {
  "admin/getVersion": {
    tag: "admin",
    summary: "Broker version and git facts ('' when unknown)",
    params: noParams,
    reply: () => versionInfoSchema,
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
    reply: () => groupGeneralSchema,
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
    reply: () => adminPageSchema(transactionRecordSchema),
    errors: (v) => [...groupErrors(v), "PAGE_INDEX_INVALID", "PAGE_SIZE_INVALID", "RPC_FAILED", "PAGE_INDEX_ERROR", ...chainQueryErrors(v)],
  },
  "admin/block/blockList": {
    tag: "admin",
    summary: "Blocks, page n covering heights (n−1)·size+1 … n·size, newest first; or the one block a filter names",
    params: (v) =>
      z.object({ ...adminPagingParams, groupId: groupIdParam(v), ...blockFilter, pkHash: z.string().optional().describe("A block hash") }),
    reply: () => adminPageSchema(blockRecordSchema),
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
    reply: () => adminPageSchema(nodeRecordSchema),
    errors: (v) => [...groupErrors(v), "RPC_FAILED", ...chainQueryErrors(v)],
  },
  "admin/blockchaininfo": {
    tag: "admin",
    summary: "Latest block and chain nodes (E)",
    params: (v) => z.object({ groupId: groupIdParam(v) }),
    reply: () => blockchainInfoSchema,
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
    reply: () => contractContextSchema,
    errors: groupErrors,
  },
};
