import { BrokerError, type Variant } from "@evb/domain";
import type { NodeRegistry } from "@evb/registry";
import type { ChainStore } from "@evb/storage";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { chainQueryFailure } from "../http/storage-failures.ts";
import { adminPage, bindAdminPaging } from "./admin-paging.ts";
import { nodeRecord } from "./chain-records.ts";

export interface NodeAdminDeps {
  registry: Pick<NodeRegistry, "brokerNodes" | "chainNodes">;
  chain: Pick<ChainStore, "totals">;
  groups: ReadonlySet<string>;
  /** This gateway's `ip:port`: a single instance always lists itself. */
  selfAddress: () => string;
}

const ALL: readonly Variant[] = ["L", "M", "E"];

/** listNodes (broker instances), node/nodeList and E's blockchaininfo (chain nodes = indexers). */
export function nodeAdminOperations(deps: NodeAdminDeps): Operation[] {
  return [
    {
      path: "admin/listNodes",
      kind: "admin",
      variants: ALL,
      groupScope: "groupless",
      async handle() {
        // Only gateways: they are the instances a client can call (and the keys of
        // listSubscription). Notifiers register too, but serve no HTTP interface.
        const nodes = await deps.registry.brokerNodes();
        const addresses = new Set(nodes.filter((n) => n.active && n.role === "gateway").map((n) => n.address));
        addresses.add(deps.selfAddress());
        return data([...addresses].sort());
      },
    },
    {
      // behaviour.md 9.5: paging parameters are bound (so missing or non-integer ones fail) but
      // neither checked nor applied; every node of the group is returned.
      path: "admin/node/nodeList",
      kind: "admin",
      variants: ALL,
      failureCode: chainQueryFailure,
      async handle(ctx) {
        const { pageNumber, pageSize } = bindAdminPaging(ctx.params);
        const group = resolveGroup(ctx.params, deps.groups);
        const nodes = await deps.registry.chainNodes(group);
        if (nodes.length === 0) throw BrokerError.of("RPC_FAILED");
        return data(adminPage(nodes.length, pageNumber, pageSize, nodes.map(nodeRecord)));
      },
    },
    {
      // E early's operation (behaviour.md 9.2) takes no parameters: it describes group "1", and a
      // groupId sent along is ignored like any unknown parameter, never validated.
      path: "admin/blockchaininfo",
      kind: "admin",
      variants: ["E"],
      // Always group 1, whatever groupId says (E's blockchaininfo).
      groupScope: "group-one",
      async handle() {
        const group = "1";
        const [totals, nodes] = await Promise.all([deps.chain.totals(group), deps.registry.chainNodes(group)]);
        return data({
          blockNumber: totals.latestBlock,
          nodeIdList: nodes.map((n) => n.nodeId),
          nodeIpList: nodes.map((n) => `[${n.address}]`),
        });
      },
    },
  ];
}
