import { BrokerError, isBlank, type Variant } from "@evb/domain";
import type { BlockRow, ChainStore } from "@evb/storage";
import { resolveGroup } from "../http/group.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { chainQueryFailure } from "../http/storage-failures.ts";
import { adminPage, bindAdminPaging, checkAdminPaging } from "./admin-paging.ts";
import { blockRecord, transactionRecord } from "./chain-records.ts";

export type ChainReads = Pick<
  ChainStore,
  "totals" | "blockByHeight" | "blockByHash" | "latestBlock" | "blocksBetween" | "transactionsOfBlock"
>;

export interface ChainAdminDeps {
  chain: ChainReads;
  groups: ReadonlySet<string>;
  /** Chain nodes of a group, for nodeCount. */
  chainNodeCount: (groupId: string) => Promise<number>;
}

const ALL: readonly Variant[] = ["L", "M", "E"];

/** A non-blank optional string parameter, else undefined. */
function optionalText(value: string | undefined): string | undefined {
  return value === undefined || isBlank(value) ? undefined : value;
}

/** group/general, transaction/transList and block/blockList over the group's ledger. */
export function chainAdminOperations(deps: ChainAdminDeps): Operation[] {
  return [
    {
      path: "admin/group/general",
      kind: "admin",
      variants: ALL,
      failureCode: chainQueryFailure,
      async handle(ctx) {
        const group = resolveGroup(ctx.params, deps.groups);
        const [totals, nodeCount] = await Promise.all([deps.chain.totals(group), deps.chainNodeCount(group)]);
        return data({ nodeCount, transactionCount: totals.transactionCount, latestBlock: totals.latestBlock });
      },
    },
    {
      // behaviour.md 9.3. `transactionHash` names a BLOCK by its hash (the original's quirk).
      path: "admin/transaction/transList",
      kind: "admin",
      variants: ALL,
      failureCode: chainQueryFailure,
      async handle(ctx) {
        const { group, pageNumber, pageSize, filtered } = await blockQuery(ctx, deps, "transactionHash");
        const block = filtered === undefined ? await deps.chain.latestBlock(group) : filtered;
        if (!block || block.txCount === 0) throw BrokerError.of("RPC_FAILED");
        const total = block.txCount;
        if (pageNumber < 1 || (pageNumber - 1) * pageSize > total) throw BrokerError.of("PAGE_INDEX_ERROR");
        const rows = await deps.chain.transactionsOfBlock(group, block.height, (pageNumber - 1) * pageSize, pageSize);
        return data(adminPage(total, pageNumber, pageSize, rows.map(transactionRecord)));
      },
    },
    {
      // behaviour.md 9.4: with a filter, that one block; without, page n covers heights
      // (n−1)·size+1 … n·size counted from block 1, newest first inside the page.
      path: "admin/block/blockList",
      kind: "admin",
      variants: ALL,
      failureCode: chainQueryFailure,
      async handle(ctx) {
        const { group, pageNumber, pageSize, filtered: block } = await blockQuery(ctx, deps, "pkHash");
        if (block !== undefined) {
          if (!block) throw BrokerError.of("RPC_FAILED");
          return data(adminPage(1, pageNumber, pageSize, [blockRecord(block)]));
        }
        const { latestBlock } = await deps.chain.totals(group);
        if (pageNumber < 1 || (pageNumber - 1) * pageSize > latestBlock) throw BrokerError.of("PAGE_INDEX_ERROR");
        const from = (pageNumber - 1) * pageSize + 1;
        const to = Math.min(pageNumber * pageSize, latestBlock);
        const rows = to >= from ? await deps.chain.blocksBetween(group, from, to) : [];
        return data(adminPage(latestBlock, pageNumber, pageSize, rows.map(blockRecord)));
      },
    },
  ];
}

/**
 * The common part of transList and blockList, in the reference's check order: paging parameters
 * present and integers, group, paging ranges; then the block the filter names (by the hash
 * parameter first, else blockNumber), null when it does not exist, undefined without a filter.
 */
async function blockQuery(ctx: OperationContext, deps: ChainAdminDeps, hashParam: "transactionHash" | "pkHash") {
  const paging = bindAdminPaging(ctx.params);
  const blockNumber = ctx.params.optionalInt("blockNumber");
  const group = resolveGroup(ctx.params, deps.groups);
  const { pageNumber, pageSize } = checkAdminPaging(paging);
  const filtered = await filteredBlock(deps, group, optionalText(ctx.params.optional(hashParam)), blockNumber);
  return { group, pageNumber, pageSize, filtered };
}

/** The block a filter names, by hash first, else by number; undefined when no filter is given. */
async function filteredBlock(
  deps: ChainAdminDeps,
  group: string,
  hash: string | undefined,
  height: number | null,
): Promise<BlockRow | null | undefined> {
  if (hash !== undefined) return deps.chain.blockByHash(group, hash);
  if (height !== null) return deps.chain.blockByHeight(group, height);
  return undefined;
}
