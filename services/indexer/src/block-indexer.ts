import type { LedgerFence, Logger } from "@evb/domain";
import { BatchPipeline, type BatchPipelineOptions } from "./batch-pipeline.ts";
import { ConsumerSupervisor } from "./consumer-supervisor.ts";
import { IndexerState, type Readiness, type Sealability } from "./indexer-state.ts";
import type { ChainRecords, Ledger, LogConsumers, LogMatcher, LogStarts, Receipts } from "./ports.ts";

export type { Readiness } from "./indexer-state.ts";

export interface BlockIndexerOptions {
  /** Makes the Kafka consumer group members (`kafkaConsumers(kafka)`). */
  consumers: LogConsumers;
  ledger: Ledger;
  /** Brings back blocks the ledger lost and matches each group's log to a ledger epoch. */
  matcher: LogMatcher;
  logStarts: LogStarts;
  /** Writes each block's chain record before its receipts. */
  chain: ChainRecords;
  receipts: Receipts;
  groups: readonly string[];
  topicPrefix: string;
  consumerGroup: string;
  maxBatchBytes: number;
  /** Partitions whose batches of one fetch are handed over at once (and sealed together). */
  partitionsPerFetch: number;
  /** DATABASE_QUERY_TIMEOUT_MS: the longest one Postgres call may take. The Kafka session outlives two. */
  queryTimeoutMs: number;
  /** Readiness: most records a partition may lag behind the log end before the indexer is not ready. */
  readyMaxLag: number;
  logger: Logger;
  /** Called when consuming stopped and cannot resume in this process. */
  onFatal: (err: Error) => void;
  now?: () => number;
  /** Stage timings of the batch pipeline (metrics). */
  timings?: BatchPipelineOptions["timings"];
  /** How long to keep re-joining Kafka in-process before `onFatal` (ms); 10 minutes by default. */
  giveUpMs?: number;
}

/**
 * Consumes the group log topics and turns fetched batches into blocks. Three parts, one file each:
 * `ConsumerSupervisor` (matching logs to ledger epochs, joining and re-joining the consumer
 * group, seeking to the ledger's positions), `BatchPipeline` (seal → chain records → receipts →
 * offset commit) and `IndexerState` (what they share, and readiness).
 *
 * Positions come from the ledger, not from the consumer group: on assignment the consumer seeks
 * to the ledger's positions, and a batch starting past them is not sealed but sought back. The
 * Kafka offset commit only helps the next fetch start close by (and witnesses what was sealed).
 */
export class BlockIndexer {
  private readonly state: IndexerState;
  private readonly pipeline: BatchPipeline;
  private readonly supervisor: ConsumerSupervisor;
  private readonly chain: ChainRecords;
  private readonly queryTimeoutMs: number;
  private started?: Promise<void>;

  constructor(o: BlockIndexerOptions) {
    const now = o.now ?? Date.now;
    this.queryTimeoutMs = o.queryTimeoutMs;
    this.chain = o.chain;
    this.state = new IndexerState({
      groups: o.groups,
      topicPrefix: o.topicPrefix,
      queryTimeoutMs: o.queryTimeoutMs,
      readyMaxLag: o.readyMaxLag,
      now,
    });
    this.pipeline = new BatchPipeline({
      ledger: o.ledger,
      chain: o.chain,
      receipts: o.receipts,
      logStarts: o.logStarts,
      state: this.state,
      logger: o.logger,
      now,
      ...(o.timings ? { timings: o.timings } : {}),
      onFence: (reason) => this.supervisor.rematch(reason),
    });
    this.supervisor = new ConsumerSupervisor({
      consumers: o.consumers,
      settings: {
        groupId: o.consumerGroup,
        maxBytesPerPartition: o.maxBatchBytes,
        maxWaitTimeInMs: 50,
        sessionTimeout: this.sessionTimeoutMs,
        rebalanceTimeout: this.rebalanceTimeoutMs,
        // A member re-joining after a partition waits for the others to re-join too, which they do
        // when a heartbeat tells them of the rebalance: at 250 ms, the re-join (and readiness) follows
        // the heal within about a second rather than two.
        heartbeatInterval: 250,
        partitionsConsumedConcurrently: o.partitionsPerFetch,
      },
      matcher: o.matcher,
      ledger: o.ledger,
      chain: o.chain,
      pipeline: this.pipeline,
      state: this.state,
      logger: o.logger,
      now,
      onFatal: o.onFatal,
      ...(o.giveUpMs === undefined ? {} : { giveUpMs: o.giveUpMs }),
    });
  }

  /**
   * The Kafka session timeout: how long an indexer that went silent (a pulled cable, a frozen
   * host) keeps its partitions before the others take them. Heartbeats run on their own timer,
   * so a slow seal never starves them, and a seal after the partitions moved is fenced by the
   * ledger, not by Kafka: the session only has to outlive a hiccup of the network. 6 s is the
   * least the brokers accept (`group.min.session.timeout.ms`); at 25 s, one indexer losing its
   * link stopped its partitions for 28 s on the multi-host bed.
   */
  get sessionTimeoutMs(): number {
    return 6_000;
  }

  /** The time members get to rejoin in a rebalance: longer than two database calls, so a seal under way can end first. */
  get rebalanceTimeoutMs(): number {
    return Math.max(20_000, 2 * this.queryTimeoutMs + 5_000);
  }

  start(): Promise<void> {
    this.started ??= this.supervisor.connect();
    return this.started;
  }

  /** Kafka or the ledger answers again: a consumer re-join waiting out its backoff tries at once. */
  retryNow(): void {
    this.supervisor.retryNow();
  }

  /**
   * Fences a group from outside a seal (its chain records were refused: the chain topic holds
   * another history), as a fenced seal is: refused at once, then every log matched again, after
   * the start under way (a refusal may come from the chain records written while starting).
   */
  fence(groupId: string, reason: string): void {
    this.state.refuse(groupId, reason);
    void (this.started ?? Promise.resolve()).then(
      () => this.supervisor.rematch(reason),
      () => {},
    );
  }

  /** The ledger and head the group's seals stand on now; undefined while its log is not matched. */
  fenceOf(groupId: string): LedgerFence | undefined {
    return this.state.logs.get(groupId)?.fence;
  }

  /** Ready to seal: no log refused, a consumer running, no seal stuck, no partition far behind. */
  readiness(): Readiness {
    return this.state.readiness();
  }

  /** Whether this indexer can seal `groupId` now; see `IndexerState.canSeal`. */
  /** The ledger answered a readiness look at `at` (ms): an older seal failure is cleared. */
  ledgerAnswered(at: number): void {
    this.state.ledgerAnswered(at);
  }

  canSeal(groupId: string): Sealability {
    return this.state.canSeal(groupId);
  }

  /** Groups whose log this indexer refuses, with the reason. */
  get refusedGroups(): ReadonlyMap<string, string> {
    return this.state.refusals;
  }

  /** Blocks this process sealed. */
  get sealedBlocks(): number {
    return this.state.sealedBlocks;
  }

  /** Times the Kafka consumer was replaced after the client gave it up. */
  get consumerRestarts(): number {
    return this.state.consumerRestarts;
  }

  /** Batches sought back to the ledger's position. */
  get seeksToLedger(): number {
    return this.state.seeksToLedger;
  }

  async close(): Promise<void> {
    // The consumer first (it waits for the batches it handed over), then what follows their
    // seals. The last offset commit may then fail: harmless, positions come from the ledger.
    if (this.started) await this.supervisor.close();
    await this.pipeline.idle();
    await this.chain.close();
  }
}
