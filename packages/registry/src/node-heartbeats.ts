import type { Logger } from "@evb/domain";
import { Heartbeat } from "./heartbeat.ts";
import type { NodeRegistry } from "./node-registry.ts";
import type { RegistryTimings } from "./registry-env.ts";

/** Keeps a gateway or notifier listed as a broker node (`admin/listNodes`). */
export function brokerNodeHeartbeat(opts: {
  registry: NodeRegistry;
  address: string;
  role: "gateway" | "notifier";
  timings: RegistryTimings;
  logger: Logger;
}): Heartbeat {
  const { registry, address, role, timings } = opts;
  return new Heartbeat({
    name: `${role} ${address}`,
    intervalMs: timings.heartbeatMs,
    logger: opts.logger,
    beat: () => registry.beatBrokerNode({ address, role }, timings),
    stopped: () => registry.brokerNodeStopped(address),
  });
}

/**
 * Keeps an indexer listed as a chain node (a sealer) in every group it indexes, with the
 * group's current height as its block number. A height that cannot be read is reported as
 * null rather than skipping the beat: the node is alive even when the ledger is slow.
 */
export function chainNodeHeartbeat(opts: {
  registry: NodeRegistry;
  groups: readonly string[];
  sealerIndex: number;
  address: string;
  blockNumber: (groupId: string) => Promise<number>;
  /** Whether the node can seal the group now, and why not: the gateways count only those that can. */
  canSeal: (groupId: string) => { ready: boolean; reason?: string; ledger?: string; foreignLedger?: string };
  timings: RegistryTimings;
  logger: Logger;
}): Heartbeat {
  const { registry, groups, sealerIndex, address, timings } = opts;
  return new Heartbeat({
    name: `sealer ${sealerIndex}`,
    intervalMs: timings.heartbeatMs,
    logger: opts.logger,
    beat: async () => {
      const heights = await Promise.all(groups.map((g) => opts.blockNumber(g).catch(() => null)));
      await Promise.all(
        groups.map((g, i) => {
          const can = opts.canSeal(g);
          return registry.beatChainNode(
            g,
            {
              sealerIndex,
              address,
              blockNumber: heights[i] ?? null,
              canSeal: can.ready,
              ...(can.reason ? { reason: can.reason } : {}),
              ...(can.ledger ? { ledger: can.ledger } : {}),
              ...(can.foreignLedger ? { foreignLedger: can.foreignLedger } : {}),
            },
            timings,
          );
        }),
      );
    },
    stopped: async () => {
      await Promise.all(groups.map((g) => registry.chainNodeStopped(g, sealerIndex)));
    },
  });
}
