import type { KeyedAnswer, LedgerFence, LogIdentity, PositionedRecord, SealedBlock } from "@evb/domain";
import type { SealResult } from "@evb/storage";

/**
 * The indexer's seams. `main.ts` passes the real adapters (Postgres, Kafka, Redis); the unit
 * tests pass fakes. Each port is only as wide as the indexer's use of it.
 */

/** The Postgres ledger: seals records into blocks, and says where each partition continues. */
export interface Ledger {
  /**
   * Seals `records` on top of `fence` (the ledger and head last seen); a ledger that is not that
   * one any more rejects with a `LedgerFenceError` and writes nothing.
   */
  seal(groupId: string, epoch: number, records: readonly PositionedRecord[], fence: LedgerFence): Promise<SealResult>;
  /** The ledger's next offset per partition of a log epoch (a partition absent has none yet). */
  positions(groupId: string, epoch: number): Promise<Map<number, number>>;
}

/** A group's log matched to an epoch of the ledger, or the reason it is refused. */
export type LogMatch =
  | { ok: true; epoch: number; identity: LogIdentity; fence: LedgerFence }
  /** `foreignLedger`: the identity of a ledger refused as not this deployment's (its chain records do not describe it). */
  | { ok: false; reason: string; foreignLedger?: string };

/** Before a group's log is consumed: brings back blocks the ledger lost, then matches the log to an epoch. */
export interface LogMatcher {
  match(groupId: string, logTopic: string): Promise<LogMatch>;
}

/** Where a log partition starts now (retention moves it forward). */
export interface LogStarts {
  logStart(topic: string, partition: number): Promise<number>;
}

/** Writes each block's chain record after its commit and before its receipts (`ChainRecorder`). */
export interface ChainRecords {
  start(groups: readonly string[]): Promise<void>;
  /** False (and logged) when Kafka did not take them: the blocks then stay unannounced. */
  record(epoch: number, log: LogIdentity, blocks: readonly SealedBlock[]): Promise<boolean>;
  close(): Promise<void>;
}

/** Receipts and the notifiers' nudge for a committed block: best effort, never awaited. */
export interface Receipts {
  announce(block: SealedBlock): void;
  /** Receipts of keyed publishes answered without an event of their own (docs/idempotency.md). */
  answer(answers: readonly KeyedAnswer[]): void;
}

/** What the indexer asks of its Kafka consumer group member. */
export interface ConsumerSettings {
  groupId: string;
  maxBytesPerPartition: number;
  maxWaitTimeInMs: number;
  sessionTimeout: number;
  rebalanceTimeout: number;
  heartbeatInterval: number;
  /** How many partitions' batches of one fetch are handed over at once. */
  partitionsConsumedConcurrently: number;
}

/** Makes consumer group members; a new one replaces one that stopped for good. */
export interface LogConsumers {
  create(settings: ConsumerSettings): LogConsumer;
}

/** One fetched record: `value` null for a tombstone; `timestampMs` when its producer sent it. */
interface FetchedRecord {
  offset: number;
  value: Buffer | null;
  timestampMs: number;
  /** The record's Kafka headers (a publish's `traceparent`), read only when tracing is on. */
  headers?: readonly (readonly [Buffer | null, Buffer | null])[];
}

/** The records of one partition from one fetch. */
export interface FetchedBatch {
  topic: string;
  partition: number;
  messages: readonly FetchedRecord[];
  /** Records between the batch's last one and the partition's end. */
  lag(): number;
  heartbeat(): Promise<void>;
  /** Marks the records up to `offset` consumed: the next fetch starts after it. */
  resolve(offset: number): void;
  /** False once the consumer stops, or when the partition was sought elsewhere since the fetch. */
  current(): boolean;
}

export interface TopicPartitionOffset {
  topic: string;
  partition: number;
  offset: number;
}

/** One member of the consumer group (a thin adapter over @platformatic/kafka: `kafka-consumer.ts`). */
export interface LogConsumer {
  connect(): Promise<void>;
  subscribe(topics: readonly string[]): Promise<void>;
  /** Starts fetching; `onBatch` runs for each partition's batch (several at once, up to the setting). */
  run(onBatch: (batch: FetchedBatch) => Promise<void>): Promise<void>;
  /** `restart`: whether the client restarts itself; when false the member is gone for good. */
  onCrash(listener: (error: Error, restart: boolean) => void): void;
  /** The partitions, per topic, this member holds after joining the group. */
  onAssign(listener: (assigned: Record<string, number[]>) => void): void;
  seek(position: TopicPartitionOffset): void;
  pause(topic: string): void;
  commit(positions: readonly TopicPartitionOffset[]): Promise<void>;
  disconnect(): Promise<void>;
}
