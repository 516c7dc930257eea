import { BlockNudge, errorMessage, type Logger, parseHint } from "@evb/domain";
import type { MessageSubscriber } from "../events/receipt-waiter.ts";

export interface BlockWatchOptions {
  /** The gateway's pub/sub connection (the receipt waiter's; one connection serves many channels). */
  subscriber: MessageSubscriber;
  /** The indexers' "new block" channel (redisKeys().blocksChannel). */
  channel: string;
  /** A group's current height: the slow poll that stands in for lost hints. */
  head: (groupId: string) => Promise<number>;
  /** Milliseconds between polls of the heads of watched groups (STOMP_POLL_MS). */
  pollMs: number;
  logger: Logger;
}

type Listener = (height: number) => void;

/**
 * Tells STOMP subscriptions that a group's chain grew. The indexers' nudge on the blocks channel
 * (the notifiers listen to the same) wakes them at once; a nudge is a hint and may be lost (a
 * Redis blip), so every `pollMs` the heads of the groups someone watches are read (one query per
 * group, not per subscription) and passed on too. Listeners compare the height with what they
 * have read, so a repeated or stale height costs nothing.
 */
export class BlockWatch {
  private readonly o: BlockWatchOptions;
  private readonly listeners = new Map<string, Set<Listener>>();
  private timer?: NodeJS.Timeout;
  private started?: Promise<unknown>;
  private polling = false;

  constructor(o: BlockWatchOptions) {
    this.o = o;
  }

  start(): Promise<unknown> {
    this.started ??= (async () => {
      this.o.subscriber.on("message", (channel: string, message: string) => {
        if (channel !== this.o.channel) return;
        const nudge = parseHint(BlockNudge, message);
        if (nudge) this.tell(nudge.groupId, nudge.height);
      });
      await this.o.subscriber.subscribe(this.o.channel);
      this.timer = setInterval(() => void this.poll(), this.o.pollMs);
      this.timer.unref();
    })();
    return this.started;
  }

  /** Calls `listener` with each height seen for `groupId` until the returned function is called. */
  watch(groupId: string, listener: Listener): () => void {
    let set = this.listeners.get(groupId);
    if (!set) {
      set = new Set();
      this.listeners.set(groupId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(groupId) === set) this.listeners.delete(groupId);
    };
  }

  private tell(groupId: string, height: number): void {
    for (const l of this.listeners.get(groupId) ?? []) l(height);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const groupId of [...this.listeners.keys()]) this.tell(groupId, await this.o.head(groupId));
    } catch (err) {
      this.o.logger.warn({ err: errorMessage(err) }, "could not read the chain heads for STOMP subscribers; next poll retries");
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    if (this.started) await this.o.subscriber.unsubscribe(this.o.channel).catch(() => {});
  }
}
