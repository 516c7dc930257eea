/** Which Kafka log a group's records come from: the cluster, and the log topic's topic id. */
export interface LogIdentity {
  clusterId: string;
  topicId: string;
}

/** One partition of the log as Kafka reports it. */
export interface LogPartition {
  partition: number;
  /** First offset the log still holds (log start offset). */
  low: number;
  /** Offset the next record will get (log end offset). */
  high: number;
  /**
   * The indexers' consumer group's committed offset, or null when none: a witness of what some
   * indexer sealed from this log into SOME ledger (offsets are committed only after the seal).
   */
  committed: number | null;
}

export interface LogState {
  identity: LogIdentity;
  partitions: readonly LogPartition[];
}

/** An epoch of the ledger (not retired): a log it has indexed, and its positions there. */
export interface LedgerEpoch {
  epoch: number;
  /** null for epoch 0 of a ledger from before log identities: the first log that fits claims it. */
  identity: LogIdentity | null;
  nextOffsets: ReadonlyMap<number, number>;
}

export interface LedgerLogState {
  epochs: readonly LedgerEpoch[];
  /** The number a newly adopted epoch gets (above every epoch, retired ones included). */
  nextEpoch: number;
}

/** A partition the indexer refuses, with the offsets that make it refuse. */
export interface RefusedPartition {
  partition: number;
  ledger: number | null;
  low: number;
  high: number;
  committed: number | null;
}

export type RefusalKind = "truncated" | "retention" | "ledger-behind";

export type EpochDecision =
  /** A log the ledger knows: index from the ledger's positions. `claim`: give epoch 0 this identity. */
  | { kind: "continue"; epoch: number; claim: boolean }
  /** A new log: a new epoch, indexed from the log's start; heights and sequence numbers continue. */
  | { kind: "adopt"; epoch: number; from: Map<number, number> }
  | { kind: "refuse"; refusal: RefusalKind; reason: string; partitions: RefusedPartition[] };

const sameIdentity = (a: LogIdentity | null, b: LogIdentity) => a !== null && a.clusterId === b.clusterId && a.topicId === b.topicId;

/**
 * What the indexer does with a group's log at start, from the ledger's epochs and what Kafka
 * says about the log. Never renames: a case where indexing could give an eventId to other
 * content than the one acknowledged, or skip acknowledged records in silence, is refused.
 *
 * - Known identity: continue from the ledger's positions, unless
 *   - the log ends before the ledger's position (truncation, unclean leader election): refuse;
 *   - the log starts after it (retention deleted records never indexed): refuse;
 *   - the consumer group committed past it (the ledger lost blocks: dropped, or restored from an
 *     older backup): refuse, since indexing again would give acknowledged events new ids.
 * - Epoch 0 of an old ledger with no identity: claimed by a log whose offsets fit its
 *   positions (low ≤ position ≤ high on every partition); otherwise the log is a new one.
 * - New identity: adopt it as a new epoch from the log's start, unless the consumer group
 *   committed offsets in it (a ledger indexed it, and this one does not know it): refuse.
 */
export function decideLogEpoch(ledger: LedgerLogState, log: LogState): EpochDecision {
  let known = ledger.epochs.find((e) => sameIdentity(e.identity, log.identity));
  let claim = false;
  if (!known) {
    const legacy = ledger.epochs.find((e) => e.identity === null);
    const fits = (e: LedgerEpoch) =>
      log.partitions.every((p) => {
        const next = e.nextOffsets.get(p.partition);
        return next === undefined || (p.low <= next && next <= p.high);
      });
    if (legacy && fits(legacy)) {
      known = legacy;
      claim = true;
    }
  }
  if (known) {
    const positions = known.nextOffsets;
    const at = (p: LogPartition) => positions.get(p.partition) ?? null;
    const refused = (test: (p: LogPartition, next: number) => boolean) =>
      log.partitions.filter((p) => test(p, at(p) ?? p.low)).map((p) => describe(p, at(p)));
    const truncated = refused((p, next) => p.high < next);
    if (truncated.length > 0) {
      return refuse("truncated", "the log ends before the ledger's positions (truncated, or an unclean leader election)", truncated);
    }
    const retention = refused((p, next) => p.low > next);
    if (retention.length > 0) {
      return refuse("retention", "the log no longer holds records the ledger has not indexed (retention deleted them)", retention);
    }
    const behind = refused((p, next) => p.committed !== null && p.committed > next);
    if (behind.length > 0) return refuse("ledger-behind", LEDGER_BEHIND, behind);
    return { kind: "continue", epoch: known.epoch, claim };
  }
  // Offsets committed in a log the ledger does not know mean a ledger indexed it and this one
  // lost that: even where retention has since removed those records, indexing what is left
  // would start heights and sequence numbers where that ledger did and hand out its eventIds again.
  const indexedElsewhere = log.partitions.filter((p) => p.committed !== null && p.committed > 0).map((p) => describe(p, null));
  if (indexedElsewhere.length > 0) return refuse("ledger-behind", LEDGER_BEHIND, indexedElsewhere);
  return { kind: "adopt", epoch: ledger.nextEpoch, from: new Map(log.partitions.map((p) => [p.partition, p.low])) };
}

const LEDGER_BEHIND =
  "the indexers committed offsets in this log past what the ledger holds (the ledger was dropped or restored from an older backup)";

function describe(p: LogPartition, ledger: number | null): RefusedPartition {
  return { partition: p.partition, ledger, low: p.low, high: p.high, committed: p.committed };
}

function refuse(refusal: RefusalKind, reason: string, partitions: RefusedPartition[]): EpochDecision {
  return { kind: "refuse", refusal, reason, partitions };
}
