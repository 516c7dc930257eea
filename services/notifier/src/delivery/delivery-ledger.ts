import type {
  BacklogItem,
  CatchUpResult,
  DeliveryBatch,
  FailedAttempt,
  LeaseResult,
  SubscriptionRow,
  SubscriptionStats,
} from "@evb/storage";

/**
 * What a delivery slice needs from Postgres: the subscription row, its backlog head, the slice's
 * lease, and the records of delivered and failed attempts, each fenced by the lease's token.
 * `DeliveryStore` (packages/storage/src/delivery-store.ts) is the real adapter, wired in main.ts;
 * the unit tests pass a fake.
 */
export interface DeliveryLedger {
  subscription(id: string): Promise<SubscriptionRow | null>;
  /** The next `limit` undelivered events, in order. */
  backlog(id: string, limit: number): Promise<BacklogItem[]>;
  /** The next `limit` undelivered events after (height, idx), in order (reading ahead). */
  backlogAfter(id: string, height: number, idx: number, limit: number): Promise<BacklogItem[]>;
  /**
   * Takes the slice's lease for `ms` unless another worker's lease is still running; with it come
   * the row and the first `read` undelivered events.
   */
  lease(id: string, ms: number, read: number): Promise<LeaseResult>;
  /** Extends a held lease; false when `token` is no longer the lease. */
  renew(id: string, token: number, ms: number): Promise<boolean>;
  /** Ends the slice's lease, so the next slice may start at once. */
  release(id: string, token: number): Promise<void>;
  /**
   * Records delivered events (in order) in one statement; null when the subscription is no
   * longer live or the lease was taken over (nothing recorded).
   */
  deliveredBatch(batch: DeliveryBatch): Promise<SubscriptionStats | null>;
  /** Writes a failed attempt's retry state (or the dead letter); false when not ours any more. */
  failed(id: string, token: number, f: FailedAttempt): Promise<boolean>;
  /** Refills one page of a resumed subscription's missed events; null when not ours any more. */
  catchUp(id: string, token: number, leaseMs: number): Promise<CatchUpResult | null>;
}
