import { TIMED_OUT } from "@evb/domain";
import { ReplaceableAdmin } from "@evb/eventlog";

/** What the probe asks of a Kafka admin client (`metadataAdmin` adapts @platformatic/kafka's). */
export interface MetadataAdmin {
  /** The topics' metadata as a broker answers now; a topic that does not exist is left out. */
  topicMetadata(topics: string[]): Promise<TopicMetadata[]>;
  close(): Promise<void>;
}

export interface TopicMetadata {
  name: string;
  partitions: Array<{ partitionId: number; leader: number }>;
}

export interface KafkaState {
  ok: boolean;
  reason?: string;
}

/**
 * Whether a publish can be written now, from the log topics' metadata: every topic present and
 * every partition with a leader (a partition without one refuses writes).
 */
export function judgeMetadata(expected: readonly string[], topics: readonly TopicMetadata[]): KafkaState {
  const byName = new Map(topics.map((t) => [t.name, t]));
  const problems: string[] = [];
  for (const name of expected) {
    const t = byName.get(name);
    if (!t || t.partitions.length === 0) {
      problems.push(`log topic ${name} does not exist`);
      continue;
    }
    const leaderless = t.partitions.filter((p) => p.leader < 0).map((p) => p.partitionId);
    if (leaderless.length > 0) problems.push(`log topic ${name} has no leader for partition(s) ${leaderless.join(", ")}`);
  }
  return problems.length === 0 ? { ok: true } : { ok: false, reason: `Kafka: ${problems.join("; ")}` };
}

export interface KafkaProbeOptions {
  /** A fresh admin client; a new one replaces a client whose request hung. */
  createAdmin: () => MetadataAdmin;
  topics: readonly string[];
  /** Time between two metadata requests, ms. */
  intervalMs: number;
  /** A request unanswered this long means Kafka is unreachable, ms. */
  timeoutMs: number;
  /** Told once when Kafka stops taking publishes and once when it takes them again. */
  onChange?: (state: KafkaState) => void;
  now?: () => number;
}

/**
 * Keeps a cached answer to "can Kafka take a publish?", refreshed in the background by one
 * metadata request at a time, so that readiness probes never cost a Kafka round trip. A hung
 * request counts as unreachable once it outlives the timeout, and its client is replaced (its
 * own retries could otherwise keep the answer stale long after Kafka is back).
 */
export class KafkaProbe {
  private readonly o: KafkaProbeOptions;
  private readonly now: () => number;
  private readonly admin: ReplaceableAdmin<MetadataAdmin>;
  private last: KafkaState = { ok: false, reason: "Kafka: not checked yet" };
  private inFlightSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private checked = false;

  constructor(o: KafkaProbeOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
    this.admin = new ReplaceableAdmin({ create: o.createAdmin });
  }

  /** Checks once (so the first answer is real), then keeps checking every interval. */
  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), this.o.intervalMs);
    this.timer.unref();
  }

  state(): KafkaState {
    if (this.inFlightSince !== undefined && this.now() - this.inFlightSince > this.o.timeoutMs)
      return { ok: false, reason: `Kafka: no answer to a metadata request for ${this.now() - this.inFlightSince} ms` };
    return this.last;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.admin.close();
  }

  private async probe(): Promise<void> {
    if (this.closed || this.inFlightSince !== undefined) return;
    this.inFlightSince = this.now();
    const was = this.last;
    try {
      // A hung request's client is replaced (closed in the background) before the next request.
      const topics = await this.admin.run((admin) => admin.topicMetadata([...this.o.topics]), this.o.timeoutMs);
      this.last =
        topics === TIMED_OUT
          ? { ok: false, reason: `Kafka: no answer to a metadata request within ${this.o.timeoutMs} ms` }
          : judgeMetadata(this.o.topics, topics);
    } catch (err) {
      this.last = { ok: false, reason: `Kafka: ${err instanceof Error ? err.message : String(err)}` };
    }
    this.inFlightSince = undefined;
    // The first answer is news only when it is bad: a healthy start needs no line.
    const first = !this.checked;
    this.checked = true;
    if (!this.closed && (first ? !this.last.ok : was.ok !== this.last.ok)) this.o.onChange?.(this.last);
  }
}
