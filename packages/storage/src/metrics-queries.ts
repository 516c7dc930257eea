import type pg from "pg";

/** What the notifier's delivery gauges show, read in one round of cheap queries. */
export interface DeliveryGaugeValues {
  /** Undelivered events over every live subscription (dead-lettered ones included). */
  backlogEvents: number;
  /**
   * Seal time (epoch ms) of the oldest undelivered event of a subscription still delivering
   * (neither suspended nor paused by its owner: a deliberate pause is no delivery falling
   * behind); null when none waits.
   */
  oldestBacklogSealedAt: number | null;
  /** Subscriptions suspended until replay. */
  deadLettered: number;
  /** Live subscriptions their owners paused (admin/subscriptionSettings). */
  paused: number;
  /** Per group: blocks sealed but not yet matched into the backlogs. */
  dispatchLagBlocks: { groupId: string; blocks: number }[];
}

/** What the indexer's ledger gauges show. */
export interface LedgerGaugeValues {
  heights: { groupId: string; height: number }[];
  /** Next Kafka offset to index, per group and partition (the ledger's position in the log). */
  positions: { groupId: string; partition: number; nextOffset: number }[];
}

/**
 * Gauge queries. Each reads counters kept anyway (pending_count, chain_heads) or walks an index
 * once per subscription (the backlog head), so running them every few seconds costs little.
 */
export async function deliveryGaugeValues(pool: pg.Pool): Promise<DeliveryGaugeValues> {
  const [totals, oldest, lag] = await Promise.all([
    pool.query<{ events: number; dead: number; paused: number }>(
      `SELECT coalesce(sum(s.pending_count), 0)::bigint AS events, count(*) FILTER (WHERE s.dead_at IS NOT NULL)::bigint AS dead,
              count(*) FILTER (WHERE ss.paused)::bigint AS paused
       FROM subscriptions s LEFT JOIN subscription_settings ss ON ss.subscription_id = s.id
       WHERE s.active`,
    ),
    pool.query<{ oldest: number | null }>(
      `SELECT min(e.ts) AS oldest FROM subscriptions s
       CROSS JOIN LATERAL (SELECT b.height, b.idx FROM subscription_backlog b WHERE b.subscription_id = s.id
                           ORDER BY b.height, b.idx LIMIT 1) head
       JOIN events e ON e.group_id = s.group_id AND e.height = head.height AND e.idx = head.idx
       WHERE s.active AND s.dead_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM subscription_settings ss WHERE ss.subscription_id = s.id AND ss.paused)`,
    ),
    pool.query<{ groupId: string; blocks: number }>(
      `SELECT h.group_id AS "groupId", GREATEST(h.height - coalesce(d.height, h.height), 0) AS blocks
       FROM chain_heads h LEFT JOIN dispatch_cursors d ON d.group_id = h.group_id`,
    ),
  ]);
  return {
    backlogEvents: Number(totals.rows[0]?.events ?? 0),
    deadLettered: Number(totals.rows[0]?.dead ?? 0),
    paused: Number(totals.rows[0]?.paused ?? 0),
    oldestBacklogSealedAt: oldest.rows[0]?.oldest ?? null,
    dispatchLagBlocks: lag.rows,
  };
}

export async function ledgerGaugeValues(pool: pg.Pool): Promise<LedgerGaugeValues> {
  const [heights, positions] = await Promise.all([
    pool.query<{ groupId: string; height: number }>(`SELECT group_id AS "groupId", height FROM chain_heads`),
    pool.query<{ groupId: string; partition: number; nextOffset: number }>(
      `SELECT group_id AS "groupId", partition, next_offset AS "nextOffset" FROM indexed_offsets`,
    ),
  ]);
  return { heights: heights.rows, positions: positions.rows };
}
