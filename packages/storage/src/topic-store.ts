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

  /**
   * Creates the topic when missing; opening an existing topic changes nothing. Returns the row
   * as it stands (a second opener, or a topic created earlier, keeps its creator and time).
   */
  async open(groupId: string, name: string, creator: string, nowMs: number): Promise<TopicRow> {
    await this.pool.query(
      "INSERT INTO topics (group_id, name, address, creator, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
      [groupId, name, topicAddress(groupId, name), creator, nowMs],
    );
    const row = await this.get(groupId, name);
    if (!row) throw new Error(`topic ${name} of group ${groupId} vanished right after it was opened`);
    return row;
  }

  /** Puts topic rows back as they were acknowledged (a rebuild), in the given order; existing rows are left alone. */
  async restore(rows: readonly Pick<TopicRow, "groupId" | "name" | "address" | "creator" | "createdAt">[]): Promise<void> {
    for (const r of rows) {
      await this.pool.query(
        "INSERT INTO topics (group_id, name, address, creator, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        [r.groupId, r.name, r.address, r.creator, r.createdAt],
      );
    }
  }

  /** Which of `names` the group has no row for. */
  async missing(groupId: string, names: readonly string[]): Promise<Set<string>> {
    const r = await this.pool.query<{ name: string }>("SELECT name FROM topics WHERE group_id = $1 AND name = ANY($2::text[])", [
      groupId,
      [...names],
    ]);
    const present = new Set(r.rows.map((x) => x.name));
    return new Set(names.filter((n) => !present.has(n)));
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
