import type pg from "pg";
import { topicAddress } from "@evb/domain";

export interface TopicRow {
  groupId: string;
  name: string;
  address: string;
  creator: string;
  createdAt: number;
  seq: number;
  lastBlock: number;
  lastTimestamp: number;
}

const COLUMNS =
  'group_id AS "groupId", name, address, creator, created_at AS "createdAt", seq, last_block AS "lastBlock", last_timestamp AS "lastTimestamp"';

/** Topic rows of the ledger: creation, lookup and creation-ordered paging. */
export class TopicStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Creates the topic when missing; opening an existing topic changes nothing. */
  async open(groupId: string, name: string, creator: string, nowMs: number): Promise<void> {
    await this.pool.query(
      "INSERT INTO topics (group_id, name, address, creator, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
      [groupId, name, topicAddress(groupId, name), creator, nowMs],
    );
  }

  async get(groupId: string, name: string): Promise<TopicRow | null> {
    const r = await this.pool.query<TopicRow>(`SELECT ${COLUMNS} FROM topics WHERE group_id = $1 AND name = $2`, [groupId, name]);
    return r.rows[0] ?? null;
  }

  async exists(groupId: string, name: string): Promise<boolean> {
    const r = await this.pool.query("SELECT 1 FROM topics WHERE group_id = $1 AND name = $2", [groupId, name]);
    return (r.rowCount ?? 0) > 0;
  }

  /** One page in creation order (oldest first) and the group's topic count. */
  async list(groupId: string, offset: number, limit: number): Promise<{ total: number; rows: TopicRow[] }> {
    const [count, page] = await Promise.all([
      this.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM topics WHERE group_id = $1", [groupId]),
      this.pool.query<TopicRow>(`SELECT ${COLUMNS} FROM topics WHERE group_id = $1 ORDER BY ordinal LIMIT $2 OFFSET $3`, [
        groupId,
        limit,
        offset,
      ]),
    ]);
    return { total: count.rows[0]?.n ?? 0, rows: page.rows };
  }
}
