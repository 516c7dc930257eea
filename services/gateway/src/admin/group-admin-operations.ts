import { createHash } from "node:crypto";
import { BrokerError } from "@evb/domain";
import type { ChainStore } from "@evb/storage";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";

export interface GroupAdminDeps {
  chain: Pick<ChainStore, "totals">;
  groups: ReadonlySet<string>;
}

/**
 * Storage parameters for externally signed publishes. A signed transaction stays valid until
 * `blockLimit` = the current height + 500, as on the original's chain (the reference's sample:
 * height 100, limit 600); gas figures are the original's fixed ones.
 */
const BLOCK_LIMIT_RANGE = 500;
const GAS_LIMIT = 300_000_000;
const GAS_PRICE = 300_000_000;

/** The group's topic-control contract address: deterministic, `0x` + 40 hex. */
function topicControlAddress(groupId: string): string {
  return `0x${createHash("sha256").update(`evb-topic-control:${groupId}`).digest("hex").slice(0, 40)}`;
}

/** L's group operations: validateGroupId and getContractContext (behaviour.md 9.2). */
export function groupAdminOperations(deps: GroupAdminDeps): Operation[] {
  return [
    {
      // Unlike every other operation, a blank id is not defaulted to "1" (behaviour.md 4).
      path: "admin/validateGroupId",
      kind: "admin",
      variants: ["L"],
      groupScope: "groupless",
      async handle(ctx) {
        const groupId = ctx.params.required("groupId");
        if (!deps.groups.has(groupId)) throw BrokerError.of("UNKNOWN_GROUP");
        return data("SUCCESS");
      },
    },
    {
      path: "admin/getContractContext",
      kind: "admin",
      variants: ["L"],
      async handle(ctx) {
        const group = resolveGroup(ctx.params, deps.groups);
        const { latestBlock } = await deps.chain.totals(group);
        return data({
          chainId: "1",
          blockNumber: latestBlock,
          blockLimit: latestBlock + BLOCK_LIMIT_RANGE,
          topicAddress: topicControlAddress(group),
          gasLimit: GAS_LIMIT,
          gasPrice: GAS_PRICE,
        });
      },
    },
  ];
}
