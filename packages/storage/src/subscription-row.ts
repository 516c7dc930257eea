import type { MatchRule } from "@evb/domain";

/**
 * A subscription's counters, in the one vocabulary the code uses for them (storage, the Redis
 * copies, the notifier and the gateway alike). Each is a column of the row (`COUNTER_COLUMNS`);
 * the Redis copy and the wire call them otherwise, and each of those names is mapped in one
 * place: `statsEntry`/`readStats` (packages/subscriptions) for the copy, the listSubscription
 * and deadLetters records (services/gateway) for the wire. docs/delivery.md has the table.
 */
export interface SubscriptionCounters {
  /** Events delivered (each counted once, however often it was sent). Wire: notifiedEventCount. */
  delivered: number;
  /** Events waiting in the backlog, the head included. Wire: notifyingEventCount. */
  pending: number;
  /** Epoch ms of the last successful delivery; null before the first. Wire: notifyTimeStamp. */
  notifiedAt: number | null;
  /** Bumped with every change of the counters: orders racing copies (the newest wins). */
  rev: number;
}

/** The column of each counter. */
export const COUNTER_COLUMNS: { readonly [K in keyof SubscriptionCounters]: string } = {
  delivered: "delivered_count",
  pending: "pending_count",
  notifiedAt: "notified_at",
  rev: "stats_rev",
};

const COUNTERS_SELECTED = (Object.keys(COUNTER_COLUMNS) as (keyof SubscriptionCounters)[])
  .map((k) => `${COUNTER_COLUMNS[k]} AS "${k}"`)
  .join(", ");

export interface SubscriptionRow extends SubscriptionCounters {
  id: string;
  groupId: string;
  topic: string;
  matchRule: MatchRule;
  bodyVariant: MatchRule;
  url: string;
  nodeInstance: string;
  remoteIp: string;
  /** Who may switch its URL: the creating caller's address, or `key:<id>` of its API key. */
  owner: string;
  interfaceType: string;
  createdAt: number;
  active: boolean;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  deadAt: number | null;
  /** A resumed subscription whose missed events are still being refilled into its backlog. */
  catchingUp: boolean;
  /** Epoch ms when the current run of failed attempts began (meaningful while attempts > 0). */
  failingSince: number | null;
}

/** The counters mirrored to Redis for admin/listSubscription, with the row they belong to. */
export interface SubscriptionStats extends SubscriptionCounters {
  id: string;
  nodeInstance: string;
  createdAt: number;
}

/** Selects a `SubscriptionRow`. */
export const ROW_COLUMNS = `id, group_id AS "groupId", topic, match_rule AS "matchRule", body_variant AS "bodyVariant", url,
  node_instance AS "nodeInstance", remote_ip AS "remoteIp", owner, interface_type AS "interfaceType", created_at AS "createdAt",
  active, ${COUNTERS_SELECTED}, attempts, next_attempt_at AS "nextAttemptAt", last_error AS "lastError", dead_at AS "deadAt",
  catchup_to_height IS NOT NULL AS "catchingUp", failing_since AS "failingSince"`;

/** Selects a `SubscriptionStats`. */
export const STATS_COLUMNS = `id, node_instance AS "nodeInstance", created_at AS "createdAt", ${COUNTERS_SELECTED}`;

/** A row's counters as SubscriptionStats (what STATS_COLUMNS selects). */
export function statsOfRow(row: SubscriptionRow): SubscriptionStats {
  return {
    id: row.id,
    nodeInstance: row.nodeInstance,
    createdAt: row.createdAt,
    delivered: row.delivered,
    pending: row.pending,
    notifiedAt: row.notifiedAt,
    rev: row.rev,
  };
}
