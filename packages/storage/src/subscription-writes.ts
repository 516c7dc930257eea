import type pg from "pg";
import type { MatchRule } from "@evb/domain";
import type { DeliveryAttempt } from "./delivery-attempt-store.ts";
import type { LedgerPosition } from "./ledger-position.ts";
import type { SubscriptionRow } from "./subscription-row.ts";

/**
 * What each write of a subscription row takes and returns (subscription-lifecycle.ts holds the
 * statements themselves, the one place that writes the row).
 */

/** What the statements run on: a pool, or a client inside a transaction. */
export interface Db {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** What `created` writes: the identity of the subscription and where it starts. */
export interface CreatedRow
  extends Pick<SubscriptionRow, "id" | "groupId" | "topic" | "matchRule" | "bodyVariant" | "url" | "nodeInstance" | "remoteIp" | "owner"> {
  now: number;
  startHeight: number;
  /** The delivery cursor's idx at `startHeight` (END_OF_BLOCK: nothing of that block is wanted). */
  startIdx: number;
}

/** What `resumed` writes. */
export interface ResumedRow {
  id: string;
  url: string;
  nodeInstance: string;
  remoteIp: string;
  matchRule: MatchRule;
  bodyVariant: MatchRule;
  startHeight: number;
  /** Refill the backlog from the delivery cursor up to here; null when nothing was missed. */
  catchUpTo: LedgerPosition | null;
}

/** What `restored` writes: the row as the record says, delivered up to `delivered`, matching above `startHeight`. */
export interface RestoredRow
  extends Pick<
    SubscriptionRow,
    "id" | "groupId" | "topic" | "matchRule" | "bodyVariant" | "url" | "nodeInstance" | "remoteIp" | "owner" | "interfaceType"
  > {
  createdAt: number;
  active: boolean;
  startHeight: number;
  delivered: LedgerPosition;
  deliveredCount: number;
  unsubscribedBy: string | null;
  unsubscribedAt: number | null;
  /** Refill the backlog from `delivered` up to here; null when nothing was missed. */
  catchUpTo: LedgerPosition | null;
}

/** A failed attempt (`deadAt` set: the last one, `dead`). */
export interface FailedAttempt {
  attempts: number;
  nextAttemptAt: number;
  error: string;
  deadAt: number | null;
  failingSince?: number;
  attempt?: DeliveryAttempt;
  /** The failed attempt's traceparent: an alert this raises continues it. */
  traceparent?: string;
}

/** Successful deliveries of one slice, in delivery order, recorded together under its lease. */
export interface DeliveredEvents {
  id: string;
  token: number;
  events: readonly { height: number; idx: number }[];
  /** Attempts to add to the delivery-attempt log in the same statement (none: nothing logged). */
  attempts?: readonly DeliveryAttempt[];
  now: number;
  /** The lease is extended by this much (ms, Postgres time) with the record. */
  leaseMs: number;
  /** The first delivered attempt's traceparent: a `subscription.recovered` alert this raises continues it. */
  traceparent?: string | null;
}

/** A refill page's outcome for the row. */
export interface RefillStep {
  added: number;
  height: number;
  idx: number;
  seq: number | null;
  done: boolean;
  leaseMs: number;
}

/** A backlog event as the `leased` statement reads it: a `BacklogItem` with its content in base64. */
interface LeasedEvent {
  height: number;
  idx: number;
  eventId: string;
  topic: string;
  /** The content, base64 (JSON has no bytes). */
  content: string;
  extensions: Record<string, string>;
  /** Epoch ms when the event's block was sealed. */
  sealedAt: number;
  traceparent: string | null;
}

/** What the `leased` transition returns: the row, the new token, and the backlog's first events. */
export type LeasedRow = SubscriptionRow & {
  leaseToken: number;
  seen: number;
  backlog: LeasedEvent[];
};
