import {
  type ChainAppendDecision,
  type ChainRecord,
  chainRecordOf,
  chainTopicName,
  decideChainAppend,
  errorMessage,
  type Logger,
  type LogIdentity,
  type SealedBlock,
} from "@evb/domain";
import type { ChainLogWriter, ChainTail } from "@evb/eventlog";
import type { ChainRecordStore } from "@evb/storage";

/** How long written chain records wait to be marked so in the ledger, gathered into one update (ms). */
const MARK_EVERY_MS = 200;
/** How long a write waits for the tail to have read the chain topic to its end, by default (ms). */
const TAIL_WAIT_MS = 5_000;

export interface ChainRecorderOptions {
  writer: Pick<ChainLogWriter, "write">;
  store: Pick<ChainRecordStore, "unwritten" | "markWritten">;
  /** What each group's chain topic holds: every write is judged against it first (`decideChainAppend`). */
  tail: Pick<ChainTail, "current">;
  topicPrefix: string;
  logger: Logger;
  now: () => number;
  /**
   * A write was refused (the chain topic holds another history for its heights): the group is
   * to be fenced as a fenced seal is, refused and every log matched again (`BlockIndexer.fence`).
   */
  onRefuse: (groupId: string, reason: string) => void;
  /** How often blocks still lacking their chain record are looked for (ms). */
  reconcileEveryMs?: number;
  /** How long a write waits for the tail to have read the chain topic to its end (ms); then it failed. */
  tailWaitMs?: number;
}

/** A write the chain topic must not take; it was logged and the group fenced already. */
class ChainWriteRefused extends Error {}

/**
 * Puts each sealed block's chain record in the group's chain topic: after the block's Postgres
 * commit and before its receipts (so every acknowledged block has one), and, for a block whose
 * write failed or whose indexer crashed in between, later from the ledger (`blocks.chain_written`).
 *
 * The chain topic is the history a lost ledger is rebuilt from, so no height may get a second,
 * different record: before each write the tail of the topic is read to its end and the write
 * judged against it (one write per group at a time). A refused write writes nothing, logs one
 * ERROR line and fences the group; a tail that cannot say what the topic holds fails the write.
 */
export class ChainRecorder {
  private readonly o: ChainRecorderOptions;
  private timer?: NodeJS.Timeout;
  private groups: readonly string[] = [];
  private reconciling?: Promise<void>;
  private readonly unmarked = new Map<string, number[]>();
  private markTimer?: NodeJS.Timeout;
  /** Per group: the write under way, which the next one follows. */
  private readonly lanes = new Map<string, Promise<void>>();
  /** Groups whose writes were refused since the last start: nothing more is written for them. */
  private readonly refused = new Set<string>();
  /** Chain records written from the ledger after the fact. */
  reconciledRecords = 0;

  constructor(o: ChainRecorderOptions) {
    this.o = o;
  }

  /** Writes the blocks' chain records; false (and logged) when Kafka did not take them. */
  async record(epoch: number, log: LogIdentity, blocks: readonly SealedBlock[]): Promise<boolean> {
    const first = blocks[0];
    if (!first) return true;
    try {
      await this.write(
        first.groupId,
        blocks.map((b) => chainRecordOf(b, epoch, log)),
      );
    } catch (err) {
      if (err instanceof ChainWriteRefused) return false;
      this.o.logger.warn(
        { err: errorMessage(err), groupId: first.groupId },
        "could not write chain records; the blocks stay unannounced until they are",
      );
      return false;
    }
    this.noteWritten(
      first.groupId,
      blocks.map((b) => b.height),
    );
    return true;
  }

  /** Writes `records` to the group's chain topic once it is judged to take them; after the group's write under way. */
  private write(groupId: string, records: readonly ChainRecord[]): Promise<void> {
    const run = (this.lanes.get(groupId) ?? Promise.resolve()).then(() => this.judgedWrite(groupId, records));
    const lane = run.catch(() => {});
    this.lanes.set(groupId, lane);
    void lane.then(() => {
      if (this.lanes.get(groupId) === lane) this.lanes.delete(groupId);
    });
    return run;
  }

  private async judgedWrite(groupId: string, records: readonly ChainRecord[]): Promise<void> {
    if (this.refused.has(groupId)) throw new ChainWriteRefused(`group ${groupId}: chain records refused`);
    const waitMs = this.o.tailWaitMs ?? TAIL_WAIT_MS;
    const view = await this.o.tail.current(groupId, waitMs);
    // Not knowing what the topic holds is no permission: the write failed, and is retried.
    if (!view) throw new Error(`group ${groupId}: the chain topic was not read to its end within ${waitMs} ms`);
    const decision = decideChainAppend(groupId, view, records);
    if (decision.kind === "unknown") throw new Error(decision.reason);
    if (decision.kind === "refuse") {
      this.refuse(groupId, decision);
      throw new ChainWriteRefused(decision.reason);
    }
    await this.o.writer.write(chainTopicName(this.o.topicPrefix, groupId), records);
  }

  /** One ERROR line, then the group is fenced: the rematch rebuilds the ledger or refuses it for good. */
  private refuse(groupId: string, d: Extract<ChainAppendDecision, { kind: "refuse" }>): void {
    const reason = `${d.reason}; nothing written, sealing stopped, matching the ledger again (docs/ledger.md, "The chain topic")`;
    this.refused.add(groupId);
    this.o.logger.error({ groupId, height: d.height, inChainTopic: d.inTopic, offered: d.offered }, reason);
    this.o.onRefuse(groupId, reason);
  }

  /**
   * Marks blocks' chain records written in the ledger, gathered: at most one update per
   * `MARK_EVERY_MS`, off the seal's path (a mark lost to a crash only writes the records again).
   */
  private noteWritten(groupId: string, heights: readonly number[]): void {
    const list = this.unmarked.get(groupId) ?? [];
    list.push(...heights);
    this.unmarked.set(groupId, list);
    this.markTimer ??= setTimeout(() => {
      this.markTimer = undefined;
      void this.markAll();
    }, MARK_EVERY_MS);
    this.markTimer.unref?.();
  }

  private async markAll(): Promise<void> {
    const all = [...this.unmarked];
    this.unmarked.clear();
    await Promise.all(
      all.map(([groupId, heights]) =>
        this.o.store
          .markWritten(groupId, heights)
          .catch((err) =>
            this.o.logger.warn({ err: errorMessage(err) }, "could not mark chain records written; they will be written again"),
          ),
      ),
    );
  }

  /** Writes every chain record the ledger's blocks lack now, then every `reconcileEveryMs`. */
  async start(groups: readonly string[]): Promise<void> {
    this.groups = groups;
    // The groups were matched again: judge their writes afresh.
    this.refused.clear();
    await this.reconcile(this.o.now() + 1);
    this.timer ??= setInterval(() => void this.reconcile(this.o.now() - 5_000).catch(() => {}), this.o.reconcileEveryMs ?? 10_000);
    this.timer.unref();
  }

  private reconcile(sealedBeforeMs: number): Promise<void> {
    // Cleared in a later turn: a run that awaits nothing must not leave itself behind as under way.
    this.reconciling ??= (async () => {
      for (const groupId of this.groups) {
        if (!this.refused.has(groupId)) await this.reconcileGroup(groupId, sealedBeforeMs);
      }
    })().finally(() => {
      this.reconciling = undefined;
    });
    return this.reconciling;
  }

  /** Writes the group's missing chain records, a page at a time; a failure waits for the next round. */
  private async reconcileGroup(groupId: string, sealedBeforeMs: number): Promise<void> {
    try {
      for (;;) {
        const missing = await this.o.store.unwritten(groupId, sealedBeforeMs);
        if (missing.length === 0) return;
        await this.write(groupId, missing);
        await this.o.store.markWritten(
          groupId,
          missing.map((r) => r.height),
        );
        this.reconciledRecords += missing.length;
        this.o.logger.info(
          { groupId, heights: [missing[0]?.height, missing.at(-1)?.height] },
          "wrote chain records the ledger's blocks lacked",
        );
      }
    } catch (err) {
      if (!(err instanceof ChainWriteRefused)) {
        this.o.logger.warn({ err: errorMessage(err), groupId }, "could not write missing chain records; retrying later");
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    await this.reconciling;
    await this.markAll();
  }
}
