import { createHash } from "node:crypto";

/**
 * The node id a chain node (an indexer) is known by: 128 hex characters, like the public-key
 * node ids of the original chain, derived from the sealer index alone so that a restarted or
 * replaced indexer with the same index keeps its id.
 */
export function chainNodeId(sealerIndex: number): string {
  return createHash("sha512").update(`evb-chain-node:${sealerIndex}`).digest("hex");
}
