import { Consumer, type GroupAssignment } from "@platformatic/kafka";
import { isRetriableKafkaFailure, ServiceError } from "@evb/domain";
import { type FetchedPartition, type FetchPosition, type KafkaClient, LogFetcher } from "@evb/eventlog";
import type { ConsumerSettings, FetchedBatch, LogConsumer, LogConsumers, TopicPartitionOffset } from "./ports.ts";

/**
 * The `LogConsumers` port over @platformatic/kafka: a consumer-group member (classic protocol:
 * its session and rebalance timeouts are the indexer's to choose) that fetches at positions of
 * its own, never auto-commits, and hands over each broker's fetch one partition batch at a time.
 */
export function kafkaConsumers(kafka: KafkaClient): LogConsumers {
  return { create: (settings) => new GroupMember(kafka, settings) };
}

/** A joined group member waits this long after the rebalance timeout for its JoinGroup answer (ms). */
const JOIN_MARGIN_MS = 5_000;
/** Heartbeats unanswered this long: the member is given up and the supervisor replaces it (ms). */
const HEARTBEAT_STALL_MS = 90_000;
/** With nothing to fetch (no positions yet, every broker's fetch in flight), look again after this long (ms). */
const IDLE_MS = 100;
/** A broker's fetch that failed, or whose batches failed, waits this long before the next, doubling (ms). */
const FIRST_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 5_000;

/** An assigned partition: where its next fetch starts, and how often it was sought (a batch fetched before is stale). */
interface Assigned {
  topic: string;
  partition: number;
  position?: number;
  seeks: number;
}

const keyOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * One member of the indexer's consumer group. Membership (join, sync, heartbeats on their own
 * timer, so a long seal never starves them; the rejoin after a rebalance or a fencing) is the
 * client's; which offsets are fetched is this member's: a partition starts at the group's
 * committed offset (the log's start without one) unless the indexer seeks it to the ledger's
 * position, and moves on only as the indexer resolves its batches. A member the client gives up
 * on (a rejoin that failed, heartbeats stalled past the rebalance timeout) is reported as a
 * crash without restart, and the supervisor replaces it.
 */
class GroupMember implements LogConsumer {
  private readonly group: Consumer;
  private readonly fetcher: LogFetcher;
  private readonly settings: ConsumerSettings;
  private readonly assigned = new Map<string, Assigned>();
  private readonly paused = new Set<string>();
  private readonly crashListeners: ((error: Error, restart: boolean) => void)[] = [];
  private readonly assignListeners: ((assigned: Record<string, number[]>) => void)[] = [];
  /** Per broker: the fetch in flight (with its batches), and how long to wait after a failure. */
  private readonly inflight = new Map<number, Promise<void>>();
  private readonly backoff = new Map<number, number>();
  private running = false;
  private gone = false;
  private metadataFailing = false;
  private wake: () => void = () => {};
  private loop?: Promise<void>;

  constructor(kafka: KafkaClient, settings: ConsumerSettings) {
    this.settings = settings;
    this.group = new Consumer({
      ...kafka.options("consumer", Math.max(kafka.timeouts.requestMs, settings.rebalanceTimeout + JOIN_MARGIN_MS)),
      groupId: settings.groupId,
      sessionTimeout: settings.sessionTimeout,
      rebalanceTimeout: settings.rebalanceTimeout,
      heartbeatInterval: settings.heartbeatInterval,
      // A member whose heartbeats go unanswered for a while (this host's link lost, its
      // coordinator silent) keeps its place and re-joins through the client once a broker answers
      // (its heartbeat then learns it was dropped); this member keeps fetching meanwhile, and a seal
      // of a partition that moved is sorted out by the ledger. Replacing the member instead (at
      // the rebalance timeout, the client's default) cost a new member's join: 25 s on the
      // multi-host bed when the coordinator moved, and readiness 2+ s after an indexer's link healed.
      heartbeatStallTimeout: HEARTBEAT_STALL_MS,
      autocommit: false,
    });
    this.fetcher = new LogFetcher(kafka, {
      name: "consumer-fetch",
      maxWaitMs: settings.maxWaitTimeInMs,
      maxBytesPerPartition: settings.maxBytesPerPartition,
    });
  }

  async connect(): Promise<void> {}

  /** Subscribes to topics every partition of which has a leader; LOG_NOT_READY while a broker's metadata lags. */
  async subscribe(topics: readonly string[]): Promise<void> {
    let led = false;
    try {
      const md = await this.group.metadata({ topics: [...topics], forceUpdate: true, retries: 0 });
      led = topics.every((t) => (md.topics.get(t)?.partitions ?? []).every((p) => p.leader >= 0));
    } catch (err) {
      // A topic a broker does not know yet, a leader being elected: asked again by the supervisor.
      if (!isRetriableKafkaFailure(err)) throw err;
    }
    if (!led) throw new ServiceError("LOG_NOT_READY", `the brokers do not lead every partition of ${topics.join(", ")} yet`);
    for (const t of topics) if (!this.group.topics.has(t)) this.group.topics.track(t);
  }

  /** Joins the group (the first assignment is told before this resolves), then fetches until disconnected. */
  async run(onBatch: (batch: FetchedBatch) => Promise<void>): Promise<void> {
    this.group.on("consumer:group:join", (p) => this.onJoin(p.assignments ?? []));
    this.group.on("error", (err: Error) => this.crash(err, false));
    this.group.on("consumer:heartbeat:stalled", (p) =>
      this.crash(new Error(`no heartbeat answered for ${p.stalledFor} ms`, { cause: p.lastError }), false),
    );
    this.running = true;
    await this.group.joinGroup({});
    this.loop = this.fetchLoop(onBatch);
  }

  onCrash(listener: (error: Error, restart: boolean) => void): void {
    this.crashListeners.push(listener);
  }

  onAssign(listener: (assigned: Record<string, number[]>) => void): void {
    this.assignListeners.push(listener);
  }

  seek(p: TopicPartitionOffset): void {
    const a = this.assigned.get(keyOf(p.topic, p.partition));
    if (!a) return;
    a.position = p.offset;
    a.seeks++;
    this.wake();
  }

  pause(topic: string): void {
    this.paused.add(topic);
  }

  async commit(positions: readonly TopicPartitionOffset[]): Promise<void> {
    await this.group.commit({
      offsets: positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: BigInt(p.offset), leaderEpoch: -1 })),
    });
  }

  /** Stops fetching, waits for the batches handed over, and leaves the group. */
  async disconnect(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await Promise.all([this.fetcher.close(), this.group.close(true).catch(() => {})]);
  }

  private crash(error: Error, restart: boolean): void {
    if (!restart) {
      if (this.gone || !this.running) return;
      this.gone = true;
    }
    for (const l of this.crashListeners) l(error, restart);
  }

  /** A new assignment: revoked partitions' batches go stale; new ones start at the committed offset. */
  private onJoin(assignments: readonly GroupAssignment[]): void {
    const now = new Map<string, { topic: string; partition: number }>();
    for (const a of assignments) for (const partition of a.partitions) now.set(keyOf(a.topic, partition), { topic: a.topic, partition });
    for (const k of [...this.assigned.keys()]) if (!now.has(k)) this.assigned.delete(k);
    const fresh: Assigned[] = [];
    for (const [k, p] of now) {
      if (this.assigned.has(k)) continue;
      const a: Assigned = { ...p, seeks: 0 };
      this.assigned.set(k, a);
      fresh.push(a);
    }
    const told: Record<string, number[]> = {};
    for (const a of assignments) told[a.topic] = [...a.partitions];
    for (const l of this.assignListeners) l(told);
    void this.startAtCommitted(fresh);
    this.wake();
  }

  /** Partitions not sought meanwhile start at the group's committed offset, or the log's start (out of range from 0). */
  private async startAtCommitted(fresh: readonly Assigned[]): Promise<void> {
    const byTopic = new Map<string, number[]>();
    for (const a of fresh) byTopic.set(a.topic, [...(byTopic.get(a.topic) ?? []), a.partition]);
    const committed = await this.group
      .listCommittedOffsets({ topics: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })) })
      .catch(() => new Map<string, bigint[]>());
    for (const a of fresh) {
      if (a.seeks > 0 || a.position !== undefined || this.assigned.get(keyOf(a.topic, a.partition)) !== a) continue;
      const at = committed.get(a.topic)?.[a.partition] ?? -1n;
      a.position = at >= 0n ? Number(at) : 0;
    }
    this.wake();
  }

  /** Starts a fetch from every broker leading a partition ready to fetch and not fetched from now, until stopped. */
  private async fetchLoop(onBatch: (batch: FetchedBatch) => Promise<void>): Promise<void> {
    while (this.running) {
      const woken = new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      const ready = [...this.assigned.values()].filter((a) => a.position !== undefined && !this.paused.has(a.topic));
      const positions: FetchPosition[] = ready.map((a) => ({ topic: a.topic, partition: a.partition, offset: a.position as number }));
      try {
        const { byNode } = await this.fetcher.byLeader(positions);
        this.metadataFailing = false;
        for (const [node, at] of byNode) {
          if (this.inflight.has(node)) continue;
          const fetching = this.fetchFrom(node, at, onBatch).finally(() => {
            this.inflight.delete(node);
            this.wake();
          });
          this.inflight.set(node, fetching);
        }
      } catch (err) {
        // Kafka away: told once, then asked again every IDLE_MS.
        if (!this.metadataFailing) this.crash(err instanceof Error ? err : new Error(String(err)), true);
        this.metadataFailing = true;
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([woken, new Promise((r) => (timer = setTimeout(r, IDLE_MS)))]);
      clearTimeout(timer);
    }
    await Promise.all(this.inflight.values());
  }

  /** One broker's fetch and its batches; a failure of either delays that broker's next fetch. */
  private async fetchFrom(node: number, at: readonly FetchPosition[], onBatch: (batch: FetchedBatch) => Promise<void>): Promise<void> {
    const seeks = new Map(at.map((p) => [keyOf(p.topic, p.partition), this.assigned.get(keyOf(p.topic, p.partition))?.seeks]));
    let failed: unknown;
    try {
      const fetched = await this.fetcher.fetchFrom(node, at);
      const batches = fetched.flatMap((f) => this.take(f, at, seeks));
      const limit = Math.max(1, this.settings.partitionsConsumedConcurrently);
      for (let i = 0; i < batches.length && this.running; i += limit) {
        const settled = await Promise.allSettled(batches.slice(i, i + limit).map((b) => onBatch(b)));
        failed ??= settled.find((s) => s.status === "rejected")?.reason;
      }
    } catch (err) {
      failed = err;
      // A broker that failed once is reported once, not on every retry.
      if (!this.backoff.has(node)) this.crash(err instanceof Error ? err : new Error(String(err)), true);
    }
    if (failed === undefined) {
      this.backoff.delete(node);
      return;
    }
    const delay = Math.min((this.backoff.get(node) ?? FIRST_BACKOFF_MS / 2) * 2, MAX_BACKOFF_MS);
    this.backoff.set(node, delay);
    await new Promise((r) => setTimeout(r, delay));
  }

  /** A fetched partition as a batch for the indexer, or nothing (stale, out of range, no records). */
  private take(f: FetchedPartition, at: readonly FetchPosition[], seeks: ReadonlyMap<string, number | undefined>): FetchedBatch[] {
    const key = keyOf(f.topic, f.partition);
    const a = this.assigned.get(key);
    const from = at.find((p) => p.topic === f.topic && p.partition === f.partition)?.offset;
    if (!a || a.seeks !== seeks.get(key) || a.position !== from || this.paused.has(f.topic)) return [];
    if (f.outOfRange !== undefined) {
      // The position is gone (retention): go on from the log's start; a batch past the
      // ledger's position is then a gap the indexer judges (refuses, or seeks back).
      a.position = f.outOfRange;
      return [];
    }
    if (f.messages.length === 0) {
      a.position = f.next;
      return [];
    }
    const current = () => this.running && this.assigned.get(key) === a && a.seeks === seeks.get(key) && !this.paused.has(f.topic);
    const last = (f.messages.at(-1) as { offset: number }).offset;
    return [
      {
        topic: f.topic,
        partition: f.partition,
        messages: f.messages.map((m) => ({ offset: m.offset, value: m.value, timestampMs: m.timestampMs, headers: m.headers })),
        lag: () => Math.max(0, f.end - (last + 1)),
        // The client heartbeats on its own timer, whatever the indexer is doing.
        heartbeat: async () => {},
        resolve: (offset) => {
          if (current()) a.position = Math.max(a.position ?? 0, offset + 1);
        },
        current,
      },
    ];
  }
}
