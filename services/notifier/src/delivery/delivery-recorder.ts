import type { BacklogItem, DeliveryAttempt } from "@evb/storage";
import type { DeliveryLedger } from "./delivery-ledger.ts";
import { Pending } from "./pending.ts";
import type { SliceLease } from "./slice-lease.ts";
import type { StatsCopies } from "./stats-mirror.ts";

/** The retry state (or dead letter) written for a failed head. */
export type HeadFailed = Parameters<DeliveryLedger["failed"]>[2];

interface RecorderSettings {
  ledger: DeliveryLedger;
  stats: StatsCopies;
  now: () => number;
  /** How long a record extends the lease (DELIVERY_LOCK_MS). */
  lockMs: number;
  /** Told the time of each record that wrote something (the step's record clock restarts from it). */
  onRecorded: (at: number) => void;
}

/**
 * What a slice writes to the ledger: its delivered events, gathered and recorded in one
 * statement per batch (with their attempts when the attempt log is on), and a failed head's
 * retry state or dead letter. Every write is fenced by the lease's token; false means the
 * subscription was unsubscribed or the lease taken over: not ours to go on.
 */
export class DeliveryRecorder {
  private readonly done: BacklogItem[] = [];
  private readonly logged: DeliveryAttempt[] = [];
  /** The first unrecorded delivery's attempt span: a `subscription.recovered` alert the record raises continues it. */
  private traceparent: string | undefined;
  /** The counter copy (Redis) of the last record, going on while the next callbacks are sent. */
  private readonly copying = new Pending();
  private readonly lease: SliceLease;
  private readonly c: RecorderSettings;

  constructor(lease: SliceLease, c: RecorderSettings) {
    this.lease = lease;
    this.c = c;
  }

  /** Delivered events not yet recorded. */
  get unrecorded(): number {
    return this.done.length;
  }

  /** `item` was delivered (`attempt`: its entry in the attempt log, when kept; `traceparent`: the attempt's span, when traced). */
  delivered(item: BacklogItem, attempt: DeliveryAttempt | null, traceparent?: string): void {
    if (this.done.length === 0) this.traceparent = traceparent;
    this.done.push(item);
    if (attempt) this.logged.push(attempt);
  }

  /** Records the delivered events, extending the lease by `leaseMs` (0 ends it). */
  async record(leaseMs = this.c.lockMs): Promise<boolean> {
    if (this.done.length === 0) return true;
    const { ledger, now } = this.c;
    const at = now();
    const stats = await ledger.deliveredBatch({
      id: this.lease.id,
      token: this.lease.token,
      events: this.done.map((e) => ({ height: e.height, idx: e.idx })),
      attempts: this.logged.length > 0 ? [...this.logged] : [],
      now: at,
      leaseMs,
      traceparent: this.traceparent ?? null,
    });
    this.done.length = 0;
    this.logged.length = 0;
    this.c.onRecorded(now());
    if (!stats) return false;
    this.lease.extended(at, leaseMs);
    // The counter copy (Redis) goes on while the next callbacks are sent; its failure surfaces
    // at the next record or when the slice ends, as if it had been awaited here.
    await this.copying.wait();
    this.copying.start(this.c.stats.copy([stats]));
    return true;
  }

  /** Writes a failed head's retry state, or its dead letter when `f.deadAt` is set. */
  failed(f: HeadFailed): Promise<boolean> {
    return this.c.ledger.failed(this.lease.id, this.lease.token, f);
  }

  /** Waits for the last counter copy: the slice fails with it. */
  async close(): Promise<void> {
    await this.copying.wait();
  }
}
