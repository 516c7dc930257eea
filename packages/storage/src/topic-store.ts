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

/** The places (offset, offset + limit] of a group's list; bounded on both sides, so no plan reads more than the page. */
const PAGE_WHERE = "WHERE group_id = $1 AND list_pos > $2::bigint AND list_pos <= $2::bigint + $3::bigint";

/**
 * The rows of the group ($1) named in the array parameter `names` (distinct names), one
 * primary-key probe per name, taken in the array's order. Written as a lateral join, not `name = ANY($2)`: with no statistics (a
 * Postgres without autovacuum) the planner read the whole group through its other index and
 * filtered it (13 k rows to keep 300). The lateral reference, and the LIMIT that keeps the
 * subquery from being flattened into a join, leave it no plan but the probes.
 * `lock` adds FOR UPDATE, row by row in that order (so callers pass the names sorted).
 */
export function topicsByNameSql(columns: string, lock: boolean, names = "$2"): string {
  return `SELECT t.* FROM unnest(${names}::text[]) WITH ORDINALITY AS n(name, i)
    CROSS JOIN LATERAL (SELECT ${columns} FROM topics WHERE group_id = $1 AND topics.name = n.name LIMIT 1${lock ? " FOR UPDATE" : ""}) t
    ORDER BY n.i`;
}

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
    const r = await this.pool.query<{ name: string }>(topicsByNameSql("name", false), [groupId, [...new Set(names)]]);
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

  /**
   * One page in creation order (oldest first) and the group's topic count. Each topic holds its
   * place in the group's list (`list_pos`, gapless from 1, taken when it is inserted: migration
   * 027), so a page is a range of places read from one index and the total is the highest place
   * (one descent of the same index): neither grows with the group, and neither needs statistics
   * to be planned so.
   */
  async list(groupId: string, offset: number, limit: number): Promise<{ total: number; rows: TopicRow[] }> {
    const [count, page] = await Promise.all([
      this.pool.query<{ n: number }>("SELECT coalesce(max(list_pos), 0)::int AS n FROM topics WHERE group_id = $1", [groupId]),
      this.pool.query<TopicRow>(`SELECT ${COLUMNS} FROM topics ${PAGE_WHERE} ORDER BY list_pos`, [groupId, offset, limit]),
    ]);
    return { total: count.rows[0]?.n ?? 0, rows: page.rows };
  }
}
