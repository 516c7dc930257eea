import type pg from "pg";
import { holdsNul } from "@evb/domain";

/** A place in a group's ledger order: block height, then index inside the block. */
export interface FeedPosition {
  height: number;
  idx: number;
}

/** The largest index inside a block: `{ height: h, idx: AFTER_BLOCK }` is "after every event of block h". */
export const AFTER_BLOCK = 2_147_483_647;

/** One sealed event in ledger order, with what a subscriber is sent. */
export interface FeedEvent extends FeedPosition {
  eventId: string;
  topic: string;
  content: Buffer;
  extensions: Record<string, string>;
  sender: string;
  txHash: string;
  timestampMs: number;
}

/** The topics of a range of blocks, and the head the range was clamped to. */
export interface BlockTopics {
  head: number;
  topics: string[];
}

const FEED_COLUMNS = `height, idx, event_id AS "eventId", topic, content, extensions, sender, tx_hash AS "txHash", ts AS "timestampMs"`;

/**
 * Read-only pages of sealed events in ledger order (height, idx), for subscribers that read the
 * ledger themselves (STOMP). Blocks commit whole and in height order, so every event at or
 * below a head read earlier is already visible: a page bounded by that head is complete.
 */
export class EventFeed {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Current height of a group's chain (0 before its first block). */
  async head(groupId: string): Promise<number> {
    const r = await this.pool.query<{ height: number }>("SELECT height FROM chain_heads WHERE group_id = $1", [groupId]);
    return r.rows[0]?.height ?? 0;
  }

  /**
   * Up to `limit` events after `after` and at most at height `upTo`, in ledger order; only of
   * `topics` when given (null: every topic, for callers that match patterns themselves).
   */
  async after(groupId: string, after: FeedPosition, upTo: number, limit: number, topics: readonly string[] | null): Promise<FeedEvent[]> {
    const params: unknown[] = [groupId, after.height, after.idx, upTo, limit];
    if (topics) params.push(topics.filter((t) => !holdsNul(t)));
    const r = await this.pool.query<FeedEvent>(
      `SELECT ${FEED_COLUMNS} FROM events
       WHERE group_id = $1 AND (height, idx) > ($2::bigint, $3::integer) AND height <= $4${topics ? " AND topic = ANY($6::text[])" : ""}
       ORDER BY height, idx LIMIT $5`,
      params,
    );
    return r.rows;
  }

  /**
   * The distinct topics sealed in blocks (from, to], to clamped to the group's head as it is now
   * (answered as `head`), in topic order after `after` (""; the last topic of the page before), at
   * most `limit`: what a range of blocks holds, read once for every subscriber of the group.
   */
  async topicsIn(groupId: string, from: number, to: number, after: string, limit: number): Promise<BlockTopics> {
    const r = await this.pool.query<BlockTopics>(
      `WITH h AS (SELECT coalesce((SELECT height FROM chain_heads WHERE group_id = $1), 0) AS head)
       SELECT h.head, ARRAY(
         SELECT DISTINCT topic FROM events
         WHERE group_id = $1 AND height > $2 AND height <= least($3::bigint, h.head) AND topic > $4
         ORDER BY topic LIMIT $5
       ) AS topics FROM h`,
      [groupId, from, to, after, limit],
    );
    const row = r.rows[0];
    return { head: Number(row?.head ?? 0), topics: row?.topics ?? [] };
  }

  /** Where the event with exactly this id sits in block `height`, with its topic and extensions; null when it is not there. */
  async locate(
    groupId: string,
    eventId: string,
    height: number,
  ): Promise<(FeedPosition & { topic: string; extensions: Record<string, string> }) | null> {
    if (holdsNul(eventId)) return null;
    const r = await this.pool.query<FeedPosition & { topic: string; extensions: Record<string, string> }>(
      "SELECT height, idx, topic, extensions FROM events WHERE group_id = $1 AND height = $2 AND event_id = $3",
      [groupId, height, eventId],
    );
    return r.rows[0] ?? null;
  }
}
