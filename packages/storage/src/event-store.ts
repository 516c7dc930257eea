import type pg from "pg";
import { holdsNul } from "@evb/domain";

export interface EventRow {
  groupId: string;
  height: number;
  eventId: string;
  topic: string;
  seq: number;
  content: Buffer;
  extensions: Record<string, string>;
  sender: string;
  txHash: string;
  toAddress: string;
  timestampMs: number;
}

/** Reads of sealed events and chain heights. */
export class EventStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Current height of a group's chain (0 before its first block). */
  async height(groupId: string): Promise<number> {
    const r = await this.pool.query<{ height: number }>("SELECT height FROM chain_heads WHERE group_id = $1", [groupId]);
    return r.rows[0]?.height ?? 0;
  }

  /** The event with exactly this id in that block, or null. */
  async get(groupId: string, eventId: string, height: number): Promise<EventRow | null> {
    if (holdsNul(eventId)) return null;
    const r = await this.pool.query<EventRow>(
      `SELECT group_id AS "groupId", height, event_id AS "eventId", topic, seq, content, extensions, sender,
              tx_hash AS "txHash", to_address AS "toAddress", ts AS "timestampMs"
       FROM events WHERE group_id = $1 AND height = $2 AND event_id = $3`,
      [groupId, height, eventId],
    );
    return r.rows[0] ?? null;
  }
}
