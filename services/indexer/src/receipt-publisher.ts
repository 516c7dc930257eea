import {
  type BlockNudge,
  errorMessage,
  type KeyedAnswer,
  type Logger,
  parseEventId,
  type Receipt,
  redisKeys,
  type SealedBlock,
  TIMED_OUT,
  withTimeout,
} from "@evb/domain";
import type { Receipts } from "./ports.ts";

/** What the receipts need of an ioredis connection. */
export interface ReceiptRedis {
  readonly status: string;
  pipeline(): { publish(channel: string, message: string): unknown; exec(): Promise<unknown> };
  on(event: "ready", listener: () => void): unknown;
}

/** One pub/sub message owed: a gateway's receipts, or the notifiers' nudge. */
interface Message {
  channel: string;
  payload: string;
  at: number;
}

const ANNOUNCE_TIMEOUT_MS = 2_000;
/**
 * Receipts that could not be sent (Redis away) are kept this long and sent once it is back (ms):
 * a publish waits for its receipt PUBLISH_TIMEOUT_MS (10 s by default), so one sealed in the last
 * seconds of an outage is still answered SUCCESS when Redis returns, instead of TIMEOUT and a retry.
 */
export const HOLD_MS = 30_000;
/** Held receipts are sent again this long after Redis is back (ms): a gateway's subscriber may reconnect later than the indexer. */
const REPEAT_MS = 2_000;
/** At most this many messages are held (the oldest go first): a long outage costs TIMEOUTs, never memory. */
export const MAX_HELD = 10_000;

/**
 * Receipts (one message per waiting gateway) and the notifiers' "new block" nudge, sent right
 * after the commit and never awaited by the batch: they are hints (the ledger is the truth), so a
 * slow or unreachable Redis must not stall indexing. While Redis is away they are held, bounded
 * in age and number, and sent when it is ready again; a receipt no gateway waits for any more
 * is ignored there, and one sent twice (held after a send that failed late) settles its wait once.
 */
export class RedisReceipts implements Receipts {
  private readonly redis: ReceiptRedis;
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly logger: Logger;
  private readonly now: () => number;
  private held: Message[] = [];
  private dropped = 0;

  constructor(redis: ReceiptRedis, prefix: string, logger: Logger, now: () => number = Date.now) {
    this.redis = redis;
    this.keys = redisKeys(prefix);
    this.logger = logger;
    this.now = now;
    redis.on("ready", () => this.sendHeld());
  }

  announce(block: SealedBlock): void {
    const byGateway = new Map<string, Receipt[]>();
    for (const e of block.events) {
      const list = byGateway.get(e.record.gatewayId) ?? [];
      list.push({ requestId: e.record.requestId, eventId: e.eventId, height: block.height });
      byGateway.set(e.record.gatewayId, list);
    }
    const nudge: BlockNudge = { groupId: block.groupId, height: block.height };
    const messages = this.receiptMessages(byGateway);
    messages.push({ channel: this.keys.blocksChannel, payload: JSON.stringify(nudge), at: this.now() });
    this.send(messages, `announce block ${block.groupId}/${block.height}`);
  }

  /** Receipts of keyed publishes answered without an event (docs/idempotency.md). */
  answer(answers: readonly KeyedAnswer[]): void {
    const byGateway = new Map<string, Receipt[]>();
    for (const a of answers) {
      const list = byGateway.get(a.gatewayId) ?? [];
      const parsed = parseEventId(a.eventId);
      const height = parsed.ok ? Number(parsed.value.block) : 0;
      list.push({ requestId: a.requestId, eventId: a.eventId, height, idempotency: a.outcome });
      byGateway.set(a.gatewayId, list);
    }
    this.send(this.receiptMessages(byGateway), "answer keyed publishes");
  }

  private receiptMessages(byGateway: ReadonlyMap<string, Receipt[]>): Message[] {
    const at = this.now();
    return [...byGateway].map(([gatewayId, receipts]) => ({
      channel: this.keys.receiptChannel(gatewayId),
      payload: JSON.stringify(receipts),
      at,
    }));
  }

  private send(messages: Message[], what: string): void {
    if (this.redis.status !== "ready") {
      if (this.held.length === 0) this.logger.warn({ redis: this.redis.status }, "Redis not ready; receipts held until it is back");
      this.hold(messages);
      return;
    }
    void withTimeout(this.publish(messages), ANNOUNCE_TIMEOUT_MS).then(
      (r) => {
        if (r === TIMED_OUT) this.failed(messages, what, new Error(`no answer within ${ANNOUNCE_TIMEOUT_MS} ms`));
        // Redis answers: anything held from a send that failed on a connection still "ready" goes too.
        else if (this.held.length > 0) this.sendHeld();
      },
      (err: unknown) => this.failed(messages, what, err),
    );
  }

  /** A send that failed (or may have: a late one can still land, and a receipt twice is harmless) is held. */
  private failed(messages: readonly Message[], what: string, err: unknown): void {
    if (this.held.length === 0) this.logger.warn({ what, err: errorMessage(err) }, "Redis did not take receipts; held until it is back");
    this.hold(messages);
  }

  private async publish(messages: readonly Message[]): Promise<void> {
    const pipe = this.redis.pipeline();
    for (const m of messages) pipe.publish(m.channel, m.payload);
    await pipe.exec();
  }

  private hold(messages: readonly Message[]): void {
    this.held.push(...messages);
    const over = this.held.length - MAX_HELD;
    if (over > 0) {
      this.held.splice(0, over);
      this.dropped += over;
    }
  }

  /**
   * Redis is ready again: what is still fresh goes out at once, and once more `REPEAT_MS` later
   * for a gateway whose own subscriber connection came back after this one (a receipt published
   * before it re-subscribed reaches no one); the rest is dropped.
   */
  private sendHeld(): void {
    if (this.held.length === 0) return;
    const since = this.now() - HOLD_MS;
    const fresh = this.held.filter((m) => m.at >= since);
    const stale = this.held.length - fresh.length + this.dropped;
    this.held = [];
    this.dropped = 0;
    this.logger.info({ sent: fresh.length, dropped: stale }, "Redis is back; sending the receipts held meanwhile");
    if (fresh.length === 0) return;
    this.send(fresh, "send held receipts");
    setTimeout(() => {
      if (this.redis.status === "ready") void withTimeout(this.publish(fresh), ANNOUNCE_TIMEOUT_MS).catch(() => {});
    }, REPEAT_MS).unref();
  }
}
