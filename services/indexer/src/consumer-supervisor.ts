import { classifyKafkaFailure, errorMessage, type Logger } from "@evb/domain";
import type { BatchPipeline } from "./batch-pipeline.ts";
import type { IndexerState } from "./indexer-state.ts";
import type { ChainRecords, ConsumerSettings, Ledger, LogConsumer, LogConsumers, LogMatcher } from "./ports.ts";
import { retryUntil } from "./retry-until.ts";

export interface ConsumerSupervisorOptions {
  consumers: LogConsumers;
  settings: ConsumerSettings;
  matcher: LogMatcher;
  ledger: Pick<Ledger, "positions">;
  chain: ChainRecords;
  pipeline: BatchPipeline;
  state: IndexerState;
  logger: Logger;
  now: () => number;
  /** Called when consuming stopped and cannot resume in this process. */
  onFatal: (err: Error) => void;
  /** How long to keep re-joining in-process before `onFatal` (ms); GIVE_UP_MS by default. */
  giveUpMs?: number;
  /** How long one re-join attempt may take before it is abandoned (ms); REJOIN_ATTEMPT_MS by default. */
  rejoinAttemptMs?: number;
}

/** How long the indexer keeps re-joining Kafka in-process before it exits for its supervisor. */
export const GIVE_UP_MS = 10 * 60_000;
/** A just-created topic's metadata may lag on a broker: subscribing is retried this often, this long. */
const SUBSCRIBE_ATTEMPTS = 50;
const SUBSCRIBE_RETRY_MS = 200;
/**
 * One re-join in-process (match the logs, join the group, be assigned) that has not finished
 * within this long is abandoned and tried again with a fresh member: a join sent to a broker that
 * went silent waits out its request timeout, and its retries could keep waiting on it long after
 * the network healed.
 */
export const REJOIN_ATTEMPT_MS = 45_000;

/**
 * The consumer's life: match each group's log to a ledger epoch (refusing the ones that do
 * not match), join the consumer group over the accepted logs, start each assigned partition at
 * the ledger's position, and replace a member the Kafka client gave up on (fenced out of its
 * group after a long pause, a non-retriable answer) in this process, with backoff; only after
 * `giveUpMs` of failed attempts does `onFatal` ask for the process to be restarted.
 */
export class ConsumerSupervisor {
  private readonly o: ConsumerSupervisorOptions;
  private consumer?: LogConsumer;
  private closing = false;
  private rematching = false;
  /** Counts `connect` calls: one superseded (abandoned after its deadline) must not take over. */
  private generation = 0;
  /** Ends the wait before the next re-join attempt at once (Kafka or the ledger answers again). */
  private nudge: (() => void) | undefined;

  constructor(o: ConsumerSupervisorOptions) {
    this.o = o;
  }

  /** Matches every group's log to a ledger epoch, then consumes the logs it accepts. */
  async connect(): Promise<void> {
    const { state } = this.o;
    const generation = ++this.generation;
    const superseded = () => generation !== this.generation || this.closing;
    state.matching();
    for (const [topic, groupId] of state.groupOfTopic) {
      const m = await this.o.matcher.match(groupId, topic);
      if (superseded()) throw new Error("a newer re-join attempt took over");
      if (m.ok) state.accept(groupId, { epoch: m.epoch, identity: m.identity, fence: m.fence });
      else state.refuse(groupId, m.reason, m.foreignLedger);
    }
    const topics = [...state.groupOfTopic].filter(([, g]) => state.logs.has(g)).map(([t]) => t);
    if (topics.length === 0) {
      state.notConsuming("every group's log is refused");
      return;
    }
    await this.o.chain.start([...state.logs.keys()]);
    if (superseded()) throw new Error("a newer re-join attempt took over");
    const consumer = this.o.consumers.create(this.o.settings);
    this.consumer = consumer;
    await consumer.connect();
    for (let attempt = 1; ; attempt++) {
      try {
        await consumer.subscribe(topics);
        break;
      } catch (err) {
        if (attempt >= SUBSCRIBE_ATTEMPTS || classifyKafkaFailure(err) !== "LOG_NOT_READY") throw err;
        await new Promise((r) => setTimeout(r, SUBSCRIBE_RETRY_MS));
      }
    }
    consumer.onCrash((error, restart) => {
      if (restart) this.o.logger.warn({ err: errorMessage(error) }, "Kafka consumer failed; it tries again");
      else if (consumer === this.consumer) void this.recover(error);
    });
    consumer.onAssign((assigned) => void this.seekToLedger(consumer, assigned));
    await consumer.run((batch) => this.o.pipeline.onBatch(consumer, batch));
    if (superseded()) {
      await consumer.disconnect().catch(() => {});
      throw new Error("a newer re-join attempt took over");
    }
    state.consuming();
  }

  /**
   * What the supervisor waits on is back (Kafka's metadata answers, the ledger answers): a
   * re-join waiting out its backoff tries at once, so readiness follows the heal within a join.
   */
  retryNow(): void {
    this.nudge?.();
  }

  /** The backoff between re-join attempts, ended early by `retryNow`. */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.nudge = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.nudge = done;
    });
  }

  /**
   * A seal was fenced (the ledger under a group is not the one matched): leave the consumer
   * group and match every group's log again, as at start (a ledger that lost blocks is rebuilt
   * from the chain records, one that cannot be is refused), then consume from the ledger's
   * positions. Retried with backoff while the ledger cannot be read at all (its tables gone).
   */
  rematch(reason: string): void {
    if (this.rematching || this.closing) return;
    this.rematching = true;
    void this.recover(new Error(reason), "rematch").finally(() => {
      this.rematching = false;
    });
  }

  /** The member stopped for good: replace it in this process, with backoff, instead of exiting. */
  private async recover(error: Error, why: "crash" | "rematch" = "crash"): Promise<void> {
    const { state, logger } = this.o;
    if (why === "rematch") {
      logger.warn({ reason: error.message }, "matching every group's log to the ledger again before sealing on");
    } else {
      state.notConsuming(`Kafka consumer stopped (${error.message}); re-joining`);
      logger.warn({ err: errorMessage(error) }, "Kafka consumer stopped; replacing it in this process");
    }
    const rejoined = await retryUntil({
      before: () => this.consumer?.disconnect().catch(() => {}) ?? Promise.resolve(),
      attempt: () => this.connect(),
      stopped: () => this.closing,
      giveUpMs: this.o.giveUpMs ?? GIVE_UP_MS,
      attemptTimeoutMs: this.o.rejoinAttemptMs ?? REJOIN_ATTEMPT_MS,
      wait: (ms) => this.wait(ms),
      now: this.o.now,
      firstDelayMs: why === "rematch" ? 200 : 1_000,
      maxDelayMs: why === "rematch" ? 5_000 : 30_000,
      onRetry: (err, retryInMs) => {
        const what = why === "rematch" ? "matching the ledger again" : "Kafka consumer restart";
        state.notConsuming(`${what} failed (${String(err)}); retrying`);
        logger.warn(
          { err: errorMessage(err), retryInMs },
          why === "rematch" ? "could not match the ledger again" : "could not restart the Kafka consumer",
        );
      },
      onGiveUp: (err) => this.o.onFatal(new Error(`Kafka consumer could not be restarted: ${String(err)}`, { cause: err })),
    });
    if (rejoined && why === "rematch") {
      logger.info({ groups: [...state.logs.keys()], refused: [...state.refusals.keys()] }, "groups matched to the ledger again");
    } else if (rejoined) {
      state.consumerRestarted();
      logger.info({ restarts: state.consumerRestarts }, "Kafka consumer re-joined its group");
    }
  }

  /** On assignment: start each partition at the ledger's position, and commit it as the group's. */
  private async seekToLedger(consumer: LogConsumer, assigned: Record<string, number[]>): Promise<void> {
    try {
      for (const [topic, partitions] of Object.entries(assigned)) {
        const groupId = this.o.state.groupOfTopic.get(topic);
        const epoch = groupId === undefined ? undefined : this.o.state.logs.get(groupId)?.epoch;
        if (groupId === undefined || epoch === undefined) continue;
        const positions = await this.o.ledger.positions(groupId, epoch);
        const entries = partitions.flatMap((partition) => {
          const offset = positions.get(partition);
          return offset === undefined ? [] : [{ topic, partition, offset }];
        });
        for (const e of entries) consumer.seek(e);
        if (entries.length > 0) await consumer.commit(entries);
      }
    } catch (err) {
      // Harmless: the first batch past the ledger's position is sought back anyway.
      this.o.logger.warn({ err: errorMessage(err) }, "could not seek to the ledger's positions on assignment");
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.consumer?.disconnect();
  }
}
