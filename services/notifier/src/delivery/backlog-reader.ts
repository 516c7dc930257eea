import type { BacklogItem, LeaseResult, SubscriptionRow } from "@evb/storage";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import { sliceMove } from "./delivery-step.ts";

/** What the lease statement returned: the row as it left it and the first batch of the backlog. */
export type Leased = Pick<Extract<LeaseResult, { ok: true }>, "row" | "backlog" | "more">;

/** Backlog events read at once (at least; more when DELIVERY_RECORD_EVENTS is larger). */
const READ_EVENTS = 50;

/** Backlog events read at once for a slice recording `recordEvents` deliveries together. */
export function readLimit(recordEvents: number): number {
  return Math.max(recordEvents, READ_EVENTS);
}

/** How a reader reads: subscription `id`, `limit` events at once, ahead or not, by the slice's clock. */
interface ReadSettings {
  id: string;
  limit: number;
  /** Whether to read ahead at all: it only pays while a window is open (DELIVERY_WINDOW above 1). */
  ahead: boolean;
  now: () => number;
}

/**
 * One batch of a subscription's backlog under the slice's lease: the events read and not yet
 * sent and, while they are sent through a window above 1, the next ones read ahead (after the
 * last one read), so a window never empties at a batch's end. Each read ahead reads the row
 * first: a row that changed under the slice (URL, unsubscribed, refill, dead) halts reading.
 */
export class BacklogReader {
  /** The events read; queue[unsent…] are not yet sent. */
  private readonly queue: BacklogItem[];
  private unsent = 0;
  /** The last read came back full (or the lease's first batch was cut short): the backlog may hold more. */
  private more: boolean;
  /** The row changed under the slice, or a read failed: read no further ahead. */
  private halted = false;
  private reading: Promise<void> | null = null;
  private readError: unknown = null;
  private readonly ledger: DeliveryLedger;
  private readonly sub: SubscriptionRow;
  private readonly c: ReadSettings;

  /**
   * The batch as the lease statement returned it (`first`), else read now; null when the backlog
   * is empty.
   */
  static async open(ledger: DeliveryLedger, sub: SubscriptionRow, first: Leased | null, c: ReadSettings): Promise<BacklogReader | null> {
    const queue = first ? [...first.backlog] : await ledger.backlog(c.id, c.limit);
    if (queue.length === 0) return null;
    return new BacklogReader(ledger, sub, queue, first ? first.more : queue.length === c.limit, c);
  }

  private constructor(ledger: DeliveryLedger, sub: SubscriptionRow, queue: BacklogItem[], more: boolean, c: ReadSettings) {
    this.ledger = ledger;
    this.sub = sub;
    this.queue = queue;
    this.more = more;
    this.c = c;
  }

  /**
   * The next event read and not yet sent (null when none is), first starting a read ahead when
   * no more than a `window` of them is left.
   */
  take(window: number): BacklogItem | null {
    if (this.canRead() && this.queue.length - this.unsent <= window) void this.readAhead();
    return this.unsent < this.queue.length ? (this.queue[this.unsent++] as BacklogItem) : null;
  }

  /**
   * Nothing read is left to send and nothing is in flight: the next event once the read ahead is
   * in; null when there is none to wait for, or it brought none.
   */
  async takeAfterRead(): Promise<BacklogItem | null> {
    if (!this.canRead()) return null;
    await this.readAhead();
    if (this.readError) throw this.readError;
    return this.unsent < this.queue.length ? (this.queue[this.unsent++] as BacklogItem) : null;
  }

  /** What was sent is recorded: it is no longer needed in memory. */
  forgetSent(): void {
    this.queue.splice(0, this.unsent);
    this.unsent = 0;
  }

  /** Waits for a read ahead still running; its failure is thrown. */
  async finish(): Promise<void> {
    await this.reading;
    if (this.readError) throw this.readError;
  }

  /** Waits for a read ahead still running, whatever its outcome (the slice is failing anyway). */
  async quiet(): Promise<void> {
    await this.reading;
  }

  /** The reads reached the end of the backlog with the row unchanged: what was read is all there is. */
  get exhausted(): boolean {
    return !this.more && !this.halted;
  }

  private canRead(): boolean {
    return this.more && !this.halted && this.c.ahead;
  }

  private readAhead(): Promise<void> {
    this.reading ??= this.readNext();
    return this.reading;
  }

  private async readNext(): Promise<void> {
    const last = this.queue.at(-1) as BacklogItem;
    const { ledger, sub } = this;
    const { id, limit } = this.c;
    try {
      // One connection at a time (the pool is shared by every slot), and no backlog read when the
      // row says stop.
      const row = await ledger.subscription(id);
      if (sliceMove(row, this.c.now()) !== "read" || row?.url !== sub.url || row.bodyVariant !== sub.bodyVariant) {
        this.halted = true;
        return;
      }
      const rows = await ledger.backlogAfter(id, last.height, last.idx, limit);
      this.queue.push(...rows);
      this.more = rows.length === limit;
    } catch (err) {
      this.readError = err;
      this.halted = true;
    } finally {
      this.reading = null;
    }
  }
}
