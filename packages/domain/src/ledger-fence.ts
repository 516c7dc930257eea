/**
 * What an indexer last saw of a group's ledger: the ledger's identity (made with its schema) and
 * the chain head it last sealed on or read. A seal commits only if the ledger still is that one
 * and its chain still runs through that head (docs/ledger.md, "Fenced seals").
 */
export interface LedgerFence {
  identity: string;
  height: number;
  hash: string;
}

/** What a seal finds under its lock: the ledger's identity (null: none), its head, and the hash of the block at the fence's height (null: none). */
export interface FenceReading {
  identity: string | null;
  height: number;
  hashAtFence: string | null;
}

/**
 * Why a seal must not commit, or null when it may. Another indexer of the group sealing on top of
 * the fence's head is fine (the chain only grew); anything else means the ledger under this
 * indexer changed: it was replaced (another identity, or none: tables recreated or dropped), it
 * lost blocks (a head below the fence: a restored backup), or its block at the fence's height is
 * another (a restore that was sealed on since). Sealing on would hand out heights and eventIds
 * that were already given to other content.
 */
export function fenceProblem(groupId: string, fence: LedgerFence, found: FenceReading): string | null {
  if (found.identity === null) return `group ${groupId}: the ledger has no identity (its tables were dropped or recreated)`;
  if (found.identity !== fence.identity) {
    return `group ${groupId}: the ledger was replaced (identity ${found.identity}, this indexer matched ${fence.identity})`;
  }
  if (found.height < fence.height) {
    return `group ${groupId}: the chain head moved back from ${fence.height} to ${found.height} (a restored backup?)`;
  }
  if (fence.height > 0 && found.hashAtFence !== fence.hash) {
    return `group ${groupId}: block ${fence.height} is ${found.hashAtFence ?? "missing"}, not the ${fence.hash} this indexer saw`;
  }
  return null;
}
