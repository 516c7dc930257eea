import { chainRecordOf, chainTopicName, type Logger, type LogIdentity, type SealedBlock } from "@evb/domain";
import type { ChainLogWriter } from "@evb/eventlog";
import type { ChainRecordStore } from "@evb/storage";

/** How long written chain records wait to be marked so in the ledger, gathered into one update (ms). */
const MARK_EVERY_MS = 200;

export interface ChainRecorderOptions {
  writer: ChainLogWriter;
  store: ChainRecordStore;
  topicPrefix: string;
  logger: Logger;
  now: () => number;
  /** How often blocks still lacking their chain record are looked for (ms). */
  reconcileEveryMs?: number;
}

/**
 * Puts each sealed block's chain record in the group's chain topic: after the block's Postgres
 * commit and before its receipts (so every acknowledged block has one), and, for a block whose
 * write failed or whose indexer crashed in between, later from the ledger (`blocks.chain_written`).
 */
export class ChainRecorder {
  private readonly o: ChainRecorderOptions;
  private timer?: NodeJS.Timeout;
  private groups: readonly string[] = [];
  private reconciling?: Promise<void>;
  private readonly unmarked = new Map<string, number[]>();
  private markTimer?: NodeJS.Timeout;
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
      await this.o.writer.write(
        chainTopicName(this.o.topicPrefix, first.groupId),
        blocks.map((b) => chainRecordOf(b, epoch, log)),
      );
    } catch (err) {
      this.o.logger.warn(
        { err: String(err), groupId: first.groupId },
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
          .catch((err) => this.o.logger.warn({ err: String(err) }, "could not mark chain records written; they will be written again")),
      ),
    );
  }

  /** Writes every chain record the ledger's blocks lack now, then every `reconcileEveryMs`. */
  async start(groups: readonly string[]): Promise<void> {
    this.groups = groups;
    await this.reconcile(this.o.now() + 1);
    this.timer ??= setInterval(() => void this.reconcile(this.o.now() - 5_000).catch(() => {}), this.o.reconcileEveryMs ?? 10_000);
    this.timer.unref();
  }

  private reconcile(sealedBeforeMs: number): Promise<void> {
    this.reconciling ??= (async () => {
      try {
        for (const groupId of this.groups) {
          for (;;) {
            const missing = await this.o.store.unwritten(groupId, sealedBeforeMs);
            if (missing.length === 0) break;
            await this.o.writer.write(chainTopicName(this.o.topicPrefix, groupId), missing);
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
        }
      } catch (err) {
        this.o.logger.warn({ err: String(err) }, "could not write missing chain records; retrying later");
      } finally {
        this.reconciling = undefined;
      }
    })();
    return this.reconciling;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    await this.reconciling;
    await this.markAll();
  }
}
