import { intVar } from "@evb/config";

/**
 * Heartbeat timing of the node registry, spread into each service's config schema. The writer
 * of a heartbeat sets the expiry of its own keys, so readers need no timing of their own and
 * nodes with different settings can share one registry.
 */
export const registryEnv = {
  NODE_HEARTBEAT_MS: intVar(2_000, 50, 60_000, "milliseconds between node-registry heartbeats, 50–60000; below NODE_STALE_MS"),
  NODE_STALE_MS: intVar(
    10_000,
    100,
    600_000,
    "milliseconds without a heartbeat after which a node shows as inactive (nodeActive 0), 100–600000; above NODE_HEARTBEAT_MS",
  ),
  NODE_GONE_MS: intVar(
    300_000,
    200,
    86_400_000,
    "milliseconds without a heartbeat after which a node is no longer listed, 200–86400000; above NODE_STALE_MS",
  ),
};

export interface RegistryTimings {
  /** Interval between two heartbeats, ms. */
  heartbeatMs: number;
  /** A node whose last heartbeat is older than this is inactive, ms. */
  staleMs: number;
  /** A node whose last heartbeat is older than this is forgotten, ms. */
  goneMs: number;
}

/**
 * The timings from a parsed config. Throws when they are out of order: a stale limit at or
 * below the interval would flap every live node to inactive between two beats.
 */
export function registryTimings(config: { NODE_HEARTBEAT_MS: number; NODE_STALE_MS: number; NODE_GONE_MS: number }): RegistryTimings {
  const t = { heartbeatMs: config.NODE_HEARTBEAT_MS, staleMs: config.NODE_STALE_MS, goneMs: config.NODE_GONE_MS };
  if (t.staleMs <= t.heartbeatMs) {
    throw new Error(`NODE_STALE_MS (${t.staleMs}) must be above NODE_HEARTBEAT_MS (${t.heartbeatMs}); use at least 3× the heartbeat`);
  }
  if (t.goneMs <= t.staleMs) {
    throw new Error(`NODE_GONE_MS (${t.goneMs}) must be above NODE_STALE_MS (${t.staleMs})`);
  }
  return t;
}
