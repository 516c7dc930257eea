import { vi } from "vitest";
import {
  type ChainEntry,
  type ChainRecord,
  type ChainTopicView,
  chainEntryOf,
  encodeLogRecord,
  GENESIS_HASH,
  type KeyedAnswer,
  type LedgerFence,
  type LogIdentity,
  type OffsetGap,
  type PositionedRecord,
  type SealedBlock,
} from "@evb/domain";
import type { SealResult } from "@evb/storage";
import type { FetchedBatch, LogConsumer, LogMatch, TopicPartitionOffset } from "../../services/indexer/src/ports.ts";

/** Fakes of the indexer's ports for its unit tests: each records what it was asked, in one shared journal. */

export const identity: LogIdentity = { clusterId: "c", topicId: "t" };

/** The fence a freshly matched, empty ledger gives. */
export const fence: LedgerFence = { identity: "ledger-1", height: 0, hash: GENESIS_HASH };

/** A consumer group member a test drives: it hands over batches and records seeks, pauses and commits. */
export class FakeConsumer implements LogConsumer {
  onBatch?: (batch: FetchedBatch) => Promise<void>;
  crash?: (error: Error, restart: boolean) => void;
  assign?: (assigned: Record<string, number[]>) => void;
  readonly seeks: TopicPartitionOffset[] = [];
  readonly paused: string[] = [];
  readonly journal: string[];
  connect = vi.fn(async () => {});
  subscribe = vi.fn(async (_topics: readonly string[]) => {});
  disconnect = vi.fn(async () => {});
  commit = vi.fn(async (positions: readonly TopicPartitionOffset[]) => {
    this.journal.push(`commit ${positions.map((p) => `${p.partition}@${p.offset}`).join(",")}`);
  });

  constructor(journal: string[]) {
    this.journal = journal;
  }

  async run(onBatch: (batch: FetchedBatch) => Promise<void>): Promise<void> {
    this.onBatch = onBatch;
  }
  onCrash(listener: (error: Error, restart: boolean) => void): void {
    this.crash = listener;
  }
  onAssign(listener: (assigned: Record<string, number[]>) => void): void {
    this.assign = listener;
  }
  seek(p: TopicPartitionOffset): void {
    this.seeks.push(p);
  }
  pause(topic: string): void {
    this.paused.push(topic);
  }
}

export interface TestBatch extends FetchedBatch {
  resolved: number[];
  heartbeats: number;
}

/** A batch of well-formed records at `offsets` of one partition. */
export function batchOf(topic: string, partition: number, offsets: number[], o: { lag?: number; current?: boolean } = {}): TestBatch {
  const b: TestBatch = {
    topic,
    partition,
    messages: offsets.map((offset) => ({ offset, value: recordValue(offset), timestampMs: 500 })),
    lag: () => o.lag ?? 0,
    heartbeat: async () => {
      b.heartbeats++;
    },
    resolve: (offset) => void b.resolved.push(offset),
    current: () => o.current ?? true,
    resolved: [],
    heartbeats: 0,
  };
  return b;
}

function recordValue(offset: number): Buffer {
  return encodeLogRecord({
    v: 1,
    requestId: `r${offset}`,
    gatewayId: "g",
    groupId: "1",
    topic: `t${offset}`,
    content: "x",
    extensions: {},
    sender: "s",
    publishedAt: 0,
  });
}

/**
 * A ledger that seals every record it is given into one block per call (gaps as the test says),
 * with `hold` to keep a seal running until the test lets it finish.
 */
export function fakeLedger(journal: string[]) {
  let height = 0;
  const ledger = {
    gaps: [] as OffsetGap[],
    /** Keyed records every seal answers without an event. */
    answers: [] as KeyedAnswer[],
    failWith: undefined as Error | undefined,
    hold: undefined as Promise<void> | undefined,
    sealed: [] as PositionedRecord[][],
    positions: vi.fn(async (_g: string, _e: number) => new Map([[0, 5]])),
    seal: vi.fn(async (groupId: string, _epoch: number, records: readonly PositionedRecord[], _fence: LedgerFence): Promise<SealResult> => {
      journal.push(`seal ${records.map((r) => `${r.partition}:${r.offset}`).join(",")}`);
      ledger.sealed.push([...records]);
      if (ledger.hold) await ledger.hold;
      if (ledger.failWith) throw ledger.failWith;
      const gapped = new Set(ledger.gaps.map((g) => g.partition));
      const taken = records.filter((r) => !gapped.has(r.partition));
      const blocks =
        taken.length === 0 ? [] : [{ groupId, height: ++height, hash: `0x${height}`, events: taken } as unknown as SealedBlock];
      return { blocks, gaps: ledger.gaps, answers: ledger.answers };
    }),
  };
  return ledger;
}

export function fakeChain(journal: string[]) {
  const chain = {
    ok: true,
    start: vi.fn(async (_groups: readonly string[]) => {}),
    record: vi.fn(async (_epoch: number, _log: LogIdentity, blocks: readonly SealedBlock[]) => {
      journal.push(`chain ${blocks.map((b) => b.height).join(",")}`);
      return chain.ok;
    }),
    close: vi.fn(async () => {}),
  };
  return chain;
}

/**
 * A group chain topic in memory, and a tail over it: `write` appends (what `ChainLogWriter`
 * does), `current` answers what was written (the first record of a height kept), or null while
 * `readable` is false (a tail that has not read the topic to its end).
 */
export function fakeChainTopic() {
  const topic = {
    records: [] as ChainRecord[],
    readable: true,
    write: vi.fn(async (_topic: string, records: readonly ChainRecord[]) => void topic.records.push(...records)),
    current: vi.fn(async (groupId: string, _timeoutMs: number): Promise<ChainTopicView | null> => {
      if (!topic.readable) return null;
      const entries = new Map<number, ChainEntry>();
      for (const r of topic.records) if (r.groupId === groupId && !entries.has(r.height)) entries.set(r.height, chainEntryOf(r));
      return { lastHeight: Math.max(0, ...entries.keys()), since: 1, entries };
    }),
    /** How many records the topic holds for `height`. */
    at: (height: number) => topic.records.filter((r) => r.height === height).length,
  };
  return topic;
}

export function fakeReceipts(journal: string[]) {
  return {
    announce: vi.fn((block: SealedBlock) => void journal.push(`receipts ${block.height}`)),
    answer: vi.fn((answers: readonly KeyedAnswer[]) => void journal.push(`answers ${answers.map((a) => a.requestId).join(",")}`)),
  };
}

export function fakeMatcher(result: LogMatch = { ok: true, epoch: 1, identity, fence }) {
  return { result, match: vi.fn(async (_g: string, _t: string): Promise<LogMatch> => result) };
}
