import { decodeReceipts, type Logger, type Receipt } from "@evb/domain";

/** What publish needs of receipts: register interest in one, resolved with it or null on timeout. */
export interface ReceiptInbox {
  expect(requestId: string, timeoutMs: number): { receipt: Promise<Receipt | null>; cancel: () => void };
}

/** How a gateway's publishes fare: see `ReceiptWaiter.progress`. */
export interface PublishProgress {
  waiting: number;
  /** How long the oldest waiting publish has waited (ms; 0 when none waits). */
  oldestMs: number;
  /** How long since a receipt last answered a publish (ms). */
  sinceReceiptMs: number;
}

/** The pub/sub port (an ioredis subscriber connection in main.ts). */
export interface MessageSubscriber {
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  /** The connection is (again) up and subscribed (ioredis re-subscribes by itself after a reconnect). */
  on(event: "ready", listener: () => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
}

/**
 * Waits for the indexer's receipt of a publish. Receipts travel by Redis pub/sub on a channel
 * per gateway instance, so with several gateways each receives only its own. A receipt that is
 * lost (gateway restarted, Redis blip) only costs the caller a TIMEOUT answer: the event is
 * already durable in Kafka and still lands in the ledger.
 */
export class ReceiptWaiter implements ReceiptInbox {
  /** Who waits for each request id: its resolve and its timeout. */
  private readonly pending = new Map<string, { resolve: (r: Receipt | null) => void; timer: NodeJS.Timeout; since: number }>();
  /** When a receipt last answered a publish of this gateway (ms since the epoch); start-up counts as one. */
  private lastReceiptAt = Date.now();
  private readonly sub: MessageSubscriber;
  private readonly channel: string;
  private readonly logger: Logger;
  private started?: Promise<unknown>;

  constructor(opts: { subscriber: MessageSubscriber; channel: string; logger: Logger }) {
    this.sub = opts.subscriber;
    this.channel = opts.channel;
    this.logger = opts.logger;
  }

  start(): Promise<unknown> {
    this.started ??= (async () => {
      this.sub.on("message", (ch: string, msg: string) => {
        if (ch === this.channel) this.onMessage(msg);
      });
      // Receipts sent while the channel was down are lost (their publishes answer TIMEOUT), so
      // "none answered for so long" says nothing about sealing until the channel has been back a
      // while: the clock starts again. Without this, after a Redis outage the gateways said
      // "publishes are not being sealed" until a publish sent after it was answered (2 s on the
      // multi-host bed, whose publishers were all waiting on publishes of the outage).
      this.sub.on("ready", () => {
        this.lastReceiptAt = Date.now();
      });
      await this.sub.subscribe(this.channel);
    })();
    return this.started;
  }

  private onMessage(msg: string): void {
    const receipts = decodeReceipts(msg);
    if (receipts === null) {
      this.logger.warn({ msg: msg.slice(0, 200) }, "ignoring a receipt message that is neither a receipt nor a list");
      return;
    }
    for (const r of receipts) {
      const waiter = this.pending.get(r.requestId);
      if (waiter) {
        this.lastReceiptAt = Date.now();
        this.pending.delete(r.requestId);
        clearTimeout(waiter.timer);
        waiter.resolve(r);
      }
    }
  }

  /** Registers interest before the append so a fast receipt is not missed; resolves null on timeout. */
  expect(requestId: string, timeoutMs: number): { receipt: Promise<Receipt | null>; cancel: () => void } {
    const { promise, resolve } = Promise.withResolvers<Receipt | null>();
    const timer = setTimeout(() => {
      this.pending.delete(requestId);
      resolve(null);
    }, timeoutMs);
    this.pending.set(requestId, { resolve, timer, since: Date.now() });
    return {
      receipt: promise,
      cancel: () => {
        clearTimeout(timer);
        this.pending.delete(requestId);
      },
    };
  }

  get waiting(): number {
    return this.pending.size;
  }

  /**
   * Whether this gateway's publishes are being sealed: how many wait, since when the oldest
   * (entries are kept in arrival order, so the first is the oldest), and since when none was
   * answered. Readiness reads it (`judgeGateway`).
   */
  progress(now = Date.now()): PublishProgress {
    const oldest = this.pending.values().next().value;
    return { waiting: this.pending.size, oldestMs: oldest ? now - oldest.since : 0, sinceReceiptMs: now - this.lastReceiptAt };
  }

  async close(): Promise<void> {
    if (this.started) await this.sub.unsubscribe(this.channel).catch(() => {});
  }
}
