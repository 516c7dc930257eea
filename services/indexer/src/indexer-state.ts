import { type LedgerFence, type LogIdentity, logTopicName } from "@evb/domain";

export interface Readiness {
  ready: boolean;
  reason?: string;
}

/** Whether a group can be sealed, and on which ledger (its identity, while it can). */
export interface Sealability extends Readiness {
  ledger?: string;
  /** A ledger refused as not this deployment's: the gateways and notifiers must not serve it either. */
  foreignLedger?: string;
}

/** The log epoch a group's records are sealed under. */
export interface GroupLog {
  epoch: number;
  identity: LogIdentity;
  /** The ledger and chain head this indexer last saw for the group: every seal must stand on it. */
  fence: LedgerFence;
}

/**
 * What the indexer's parts share: which groups' logs are accepted (and under which epoch) or
 * refused, whether a consumer runs, the seal in progress, each partition's lag, and counters;
 * and the readiness they add up to.
 */
export class IndexerState {
  /** Log topic → group. */
  readonly groupOfTopic: ReadonlyMap<string, string>;
  private readonly accepted = new Map<string, GroupLog>();
  private readonly refused = new Map<string, string>();
  /** Group → the identity of a ledger refused as another deployment's (until the group is matched again). */
  private readonly foreign = new Map<string, string>();
  /** "topic:partition" → records behind the log end after the last batch. */
  private readonly lag = new Map<string, number>();
  private phase: Readiness = { ready: false, reason: "starting" };
  private sealingSince: number | null = null;
  /**
   * Why the last seal failed (Postgres down, a timeout), until one succeeds or the ledger answers
   * a look made after it; a fence refuses the group instead.
   */
  private sealFailure: string | null = null;
  /** When `sealFailure` was set (ms). */
  private sealFailedAt = 0;
  private counts = { sealedBlocks: 0, consumerRestarts: 0, seeksToLedger: 0 };
  private readonly o: { queryTimeoutMs: number; readyMaxLag: number; now: () => number };

  constructor(o: { groups: readonly string[]; topicPrefix: string; queryTimeoutMs: number; readyMaxLag: number; now: () => number }) {
    this.o = o;
    this.groupOfTopic = new Map(o.groups.map((g) => [logTopicName(o.topicPrefix, g), g]));
  }

  // What the parts read.

  /** Group → the log epoch its records are sealed under (accepted groups only). */
  get logs(): ReadonlyMap<string, GroupLog> {
    return this.accepted;
  }
  /** Group → why its log is refused. */
  get refusals(): ReadonlyMap<string, string> {
    return this.refused;
  }
  /** Blocks this process sealed. */
  get sealedBlocks(): number {
    return this.counts.sealedBlocks;
  }
  /** Times the Kafka consumer was replaced after its client gave it up. */
  get consumerRestarts(): number {
    return this.counts.consumerRestarts;
  }
  /** Batches sought back to the ledger's position. */
  get seeksToLedger(): number {
    return this.counts.seeksToLedger;
  }

  // What the consumer supervisor tells it (every change goes through one of these methods).

  /** Every group is about to be matched again: nothing accepted or refused until told. */
  matching(): void {
    this.accepted.clear();
    this.refused.clear();
    this.foreign.clear();
  }

  accept(groupId: string, log: GroupLog): void {
    this.accepted.set(groupId, log);
  }

  /** The group's log stops being sealed until it is matched again (a restart, or a rematch after a fence). */
  refuse(groupId: string, reason: string, foreignLedger?: string): void {
    this.refused.set(groupId, reason);
    this.accepted.delete(groupId);
    if (foreignLedger) this.foreign.set(groupId, foreignLedger);
  }

  /** A consumer runs over the accepted logs. */
  consuming(): void {
    this.phase = { ready: true };
  }

  /** No consumer runs, and why. */
  notConsuming(reason: string): void {
    this.phase = { ready: false, reason };
  }

  consumerRestarted(): void {
    this.counts.consumerRestarts++;
  }

  // What the batch pipeline tells it.

  sealStarted(): void {
    this.sealingSince = this.o.now();
  }

  sealEnded(): void {
    this.sealingSince = null;
  }

  /** A block sealed on the group's ledger: later seals must stand on it. */
  advanceFence(groupId: string, last: { height: number; hash: string }): void {
    const log = this.accepted.get(groupId);
    if (log) log.fence = { ...log.fence, height: last.height, hash: last.hash };
  }

  /** A sealed block was announced (its chain record written). */
  blockSealed(): void {
    this.counts.sealedBlocks++;
  }

  lagged(topic: string, partition: number, records: number): void {
    this.lag.set(`${topic}:${partition}`, records);
  }

  soughtToLedger(): void {
    this.counts.seeksToLedger++;
  }

  /** A seal failed: not ready until one succeeds, or the ledger answers again after this. */
  sealFailed(reason: string): void {
    this.sealFailure = reason;
    this.sealFailedAt = this.o.now();
  }

  sealSucceeded(): void {
    this.sealFailure = null;
  }

  /**
   * The ledger answered a readiness look at `at`: a seal failure before that (the ledger out of
   * reach, a connection lost) says no more about sealing now. Without this an indexer whose link
   * healed stayed not ready until a partition came back to it and one of its seals succeeded.
   */
  ledgerAnswered(at: number): void {
    if (this.sealFailure !== null && at > this.sealFailedAt) this.sealFailure = null;
  }

  // What it adds up to.

  /**
   * Whether this indexer can seal `groupId` now (what it tells the gateways in its heartbeat): its
   * log matched and not refused, a consumer running, the last seal not failed, none stuck.
   */
  canSeal(groupId: string): Sealability {
    const refused = this.refused.get(groupId);
    const foreignLedger = this.foreign.get(groupId);
    if (refused !== undefined) return { ready: false, reason: refused, ...(foreignLedger ? { foreignLedger } : {}) };
    const sealing = this.sealing();
    const ledger = this.accepted.get(groupId)?.fence.identity;
    return sealing.ready && ledger !== undefined ? { ...sealing, ledger } : sealing;
  }

  private sealing(): Readiness {
    if (!this.phase.ready) return this.phase;
    if (this.sealFailure !== null) return { ready: false, reason: this.sealFailure };
    const now = this.o.now();
    if (this.sealingSince !== null && now - this.sealingSince > 2 * this.o.queryTimeoutMs) {
      return {
        ready: false,
        reason: `a seal has been running for ${Math.round((now - this.sealingSince) / 1000)} s (Postgres slow, or a lock held)`,
      };
    }
    return { ready: true };
  }

  /** Ready to seal: no log refused, a consumer running, the last seal not failed, none stuck, no partition far behind. */
  readiness(): Readiness {
    if (this.refused.size > 0) return { ready: false, reason: [...this.refused.values()].join(" | ") };
    const sealing = this.sealing();
    if (!sealing.ready) return sealing;
    const behind = [...this.lag].filter(([, n]) => n > this.o.readyMaxLag);
    if (behind.length > 0) {
      return { ready: false, reason: `lagging behind the log: ${behind.map(([tp, n]) => `${tp} by ${n} records`).join(", ")}` };
    }
    return { ready: true };
  }
}
