import { type FenceReading, fenceProblem, type LedgerFence, type Logger, TIMED_OUT, withTimeout } from "@evb/domain";

export interface LedgerWatchOptions {
  groups: readonly string[];
  /** The fence a group's seals stand on now; undefined while its log is not matched (starting, refused). */
  fenceOf: (groupId: string) => LedgerFence | undefined;
  /** What a seal would find now (readFenceReading); rejects when Postgres does not answer. */
  read: (groupId: string, fenceHeight: number) => Promise<FenceReading>;
  /** Refuses the group and matches every log again (BlockIndexer.fence). */
  fence: (groupId: string, reason: string) => void;
  intervalMs: number;
  /** Bound of one look (a silent Postgres is the seals' and readiness's to report). */
  timeoutMs: number;
  logger: Logger;
}

/**
 * Looks at the ledger under every matched group every `intervalMs`, as a seal would under its
 * lock (`fenceProblem`), so that an idle indexer notices a replaced ledger (a dropped schema made
 * again by another service's start, a restored dump, another deployment's database) as soon as a
 * busy one: it refuses the group and rematches, which rebuilds the ledger from the chain and
 * subscriptions topics, and the gateways, which answer only out of a ledger an indexer matched,
 * serve it again. Without this, a ledger emptied while nobody publishes would stay empty.
 */
export function watchLedger(o: LedgerWatchOptions): { close(): void } {
  let looking = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      for (const g of o.groups) {
        const fence = o.fenceOf(g);
        if (!fence) continue;
        const found = await withTimeout(o.read(g, fence.height), o.timeoutMs).catch(() => null);
        if (found === null || found === TIMED_OUT) continue;
        // A seal that committed meanwhile replaced the fence: this reading is stale, the next look judges.
        const problem = fenceProblem(g, fence, found);
        if (problem === null || o.fenceOf(g) !== fence) continue;
        o.logger.error(
          { groupId: g, reason: problem },
          "the ledger under this indexer changed while it was idle; refusing the group and matching again",
        );
        o.fence(g, problem);
      }
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(() => void look(), o.intervalMs);
  timer.unref?.();
  return { close: () => clearInterval(timer) };
}
