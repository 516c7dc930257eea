import { ServiceError } from "@evb/domain";
import type { DeliveryLedger } from "./delivery-ledger.ts";

/**
 * The Postgres lease a slice delivers under, as this process's clock sees it: before each POST
 * it must have at least one attempt's time left (it is renewed otherwise), so a POST never
 * outlives it; every write of the slice checks its token and extends it.
 */
export class SliceLease {
  readonly id: string;
  readonly token: number;
  /** The slice's last record also ended the lease: no release statement is needed. */
  released = false;
  private expires: number;
  private readonly ledger: DeliveryLedger;
  private readonly t: { lockMs: number; attemptMs: number; now: () => number };

  constructor(
    ledger: DeliveryLedger,
    taken: { id: string; token: number; at: number },
    t: { lockMs: number; attemptMs: number; now: () => number },
  ) {
    this.ledger = ledger;
    this.id = taken.id;
    this.token = taken.token;
    this.expires = taken.at + t.lockMs;
    this.t = t;
  }

  /**
   * Before a POST: renews the lease when less than one attempt's time is left. Throws when
   * BullMQ says the job's lock is lost (`signal`) or the lease was taken over: another notifier
   * is taking over.
   */
  async keep(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw leaseLost(this.id, "its BullMQ lock was lost");
    if (this.expires - this.t.now() > this.t.attemptMs) return;
    const at = this.t.now();
    if (!(await this.ledger.renew(this.id, this.token, this.t.lockMs))) throw leaseLost(this.id, "its lease was taken over");
    this.expires = at + this.t.lockMs;
  }

  /** A write fenced by the token, started at `at`, extended the lease by `ms`. */
  extended(at: number, ms: number): void {
    this.expires = at + ms;
  }
}

/** This worker may no longer deliver for the subscription; the job fails and its new owner goes on. */
export function leaseLost(id: string, why: string): ServiceError {
  return new ServiceError("LEASE_LOST", `stopped delivering to ${id}: ${why}`);
}
