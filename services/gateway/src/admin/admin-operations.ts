import type { NodeRegistry } from "@evb/registry";
import type { Operation } from "../http/operation.ts";
import { basicAdminOperations } from "./basic-admin-operations.ts";
import type { BuildInfo } from "./build-info.ts";
import { type ChainReads, chainAdminOperations } from "./chain-admin-operations.ts";
import { groupAdminOperations } from "./group-admin-operations.ts";
import { nodeAdminOperations } from "./node-admin-operations.ts";

export interface AdminDeps {
  buildInfo: BuildInfo;
  /** Configured group ids in listing order; "1" among them. */
  groupList: readonly string[];
  chain: ChainReads;
  registry: Pick<NodeRegistry, "brokerNodes" | "chainNodes">;
  /** This gateway's `ip:port`, known once it listens. */
  selfAddress: () => string;
}

/**
 * Every admin operation except the subscription listings. Which variant has which is decided
 * per operation (behaviour.md 9.1): the general ones in all three, validateGroupId and
 * getContractContext in L, blockchaininfo in E.
 */
export function adminOperations(deps: AdminDeps): Operation[] {
  const groups = new Set(deps.groupList);
  return [
    ...basicAdminOperations({ buildInfo: deps.buildInfo, groupList: deps.groupList }),
    ...chainAdminOperations({
      chain: deps.chain,
      groups,
      chainNodeCount: async (g) => (await deps.registry.chainNodes(g)).length,
    }),
    ...nodeAdminOperations({ registry: deps.registry, chain: deps.chain, groups, selfAddress: deps.selfAddress }),
    ...groupAdminOperations({ chain: deps.chain, groups }),
  ];
}
