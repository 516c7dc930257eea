import type pg from "pg";
import type { EventRow } from "./event-store.ts";
import { inTransaction } from "./pool.ts";

/** What admin/events asks for, already bounded by the gateway (event-search.ts decides it). */
export interface EventQuery {
  groupId: string;
  /** Only these topics (a plain topic, or the topics a pattern matches); null: any topic. */
  topics: readonly string[] | null;
  /** Only this event (its block is `height`). */
  eventId: { id: string; height: number } | null;
  /** Seal times, epoch ms, both ends included; null: open. */
  fromMs: number | null;
  toMs: number | null;
  offset: number;
  limit: number;
  /** The most matches counted for `total` (more count as this many). */
  countCap: number;
}

/** Where one event stands for one subscription, as read (event-delivery-state.ts decides what it means). */
export interface SubscriptionPosition {
  id: string;
  topic: string;
  matchRule: "M" | "E";
  url: string;
  owner: string;
  deadAt: number | null;
  startHeight: number;
  delivered: { height: number; idx: number };
}

/** One attempt of the log, with the subscription it was made for. */
export interface EventAttempt {
  subscriptionId: string;
  at: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  excerpt: string | null;
}

const EVENT_COLUMNS = `group_id AS "groupId", height, idx, event_id AS "eventId", topic, seq, content, extensions, sender,
  tx_hash AS "txHash", to_address AS "toAddress", ts AS "timestampMs"`;

/** A found event, with its place in the block. */
export type FoundEvent = EventRow & { idx: number };

/**
 * The operator's reads of events (admin/events, admin/eventDeliveries). Every statement runs in a
 * read transaction under a server-side `statement_timeout` (so a slow plan is cancelled by
 * Postgres itself, not only abandoned by the client) and carries a LIMIT.
 */
export class EventReads {
  private readonly pool: pg.Pool;
  private readonly timeoutMs: number;

  /** `statementTimeoutMs`: the bound of each statement, ms (the gateway passes DATABASE_QUERY_TIMEOUT_MS). */
  constructor(pool: pg.Pool, statementTimeoutMs: number) {
    this.pool = pool;
    this.timeoutMs = Math.max(1, Math.floor(statementTimeoutMs));
  }

  private read<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, async (c) => {
      await c.query(`SET TRANSACTION READ ONLY`);
      await c.query(`SET LOCAL statement_timeout = ${this.timeoutMs}`);
      return fn(c);
    });
  }

  /** Topic names of the group starting with `prefix`, in name order, at most `max`. */
  topicsStartingWith(groupId: string, prefix: string, max: number): Promise<string[]> {
    return this.read(async (c) => {
      const r = await c.query<{ name: string }>(
        "SELECT name FROM topics WHERE group_id = $1 AND starts_with(name, $2) ORDER BY name LIMIT $3",
        [groupId, prefix, max],
      );
      return r.rows.map((x) => x.name);
    });
  }

  /**
   * One page of the events the query matches, newest first in ledger order ((height, idx)
   * descending; for one topic its sequence number descending, the same order, read backwards
   * along its index), and how many match, counted up to `countCap`.
   */
  search(q: EventQuery): Promise<{ total: number; events: FoundEvent[] }> {
    return this.read(async (c) => {
      const heights = await heightRange(c, q);
      if (heights === null) return { total: 0, events: [] };
      const params = [q.groupId, q.topics, q.eventId?.id ?? null, heights.lo, heights.hi, q.fromMs, q.toMs];
      const where = `group_id = $1 AND ($2::text[] IS NULL OR topic = ANY($2::text[])) AND ($3::text IS NULL OR event_id = $3)
        AND ($4::bigint IS NULL OR height >= $4) AND ($5::bigint IS NULL OR height <= $5)
        AND ($6::bigint IS NULL OR ts >= $6) AND ($7::bigint IS NULL OR ts <= $7)`;
      const order = q.topics?.length === 1 ? "seq DESC" : "height DESC, idx DESC";
      const rows = await c.query<FoundEvent>(`SELECT ${EVENT_COLUMNS} FROM events WHERE ${where} ORDER BY ${order} LIMIT $8 OFFSET $9`, [
        ...params,
        q.limit,
        q.offset,
      ]);
      const counted = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM events WHERE ${where} LIMIT $8) m`, [
        ...params,
        q.countCap,
      ]);
      return { total: counted.rows[0]?.n ?? 0, events: rows.rows };
    });
  }

  /** The event `eventId` of the group (its block is `height`), or null. */
  event(groupId: string, eventId: string, height: number): Promise<FoundEvent | null> {
    return this.read(async (c) => {
      const r = await c.query<FoundEvent>(`SELECT ${EVENT_COLUMNS} FROM events WHERE group_id = $1 AND height = $2 AND event_id = $3`, [
        groupId,
        height,
        eventId,
      ]);
      return r.rows[0] ?? null;
    });
  }

  /**
   * The group's live subscriptions that may match `topic` (its exact name, and every pattern: the
   * caller matches those), oldest first, at most `max`.
   */
  candidateSubscriptions(groupId: string, topic: string, max: number): Promise<SubscriptionPosition[]> {
    return this.read(async (c) => {
      const r = await c.query<SubscriptionPosition & { dh: number; di: number }>(
        `SELECT id, topic, match_rule AS "matchRule", url, owner, dead_at AS "deadAt", start_height AS "startHeight",
           delivered_height AS dh, delivered_idx AS di
         FROM subscriptions WHERE group_id = $1 AND active AND (topic = $2 OR strpos(topic, '+') > 0 OR strpos(topic, '#') > 0)
         ORDER BY created_at, id LIMIT $3`,
        [groupId, topic, max],
      );
      return r.rows.map(({ dh, di, ...s }) => ({ ...s, delivered: { height: dh, idx: di } }));
    });
  }

  /**
   * For the event at (height, idx), sealed at `sealedAt`, and these subscriptions: which hold it
   * in their backlog, which is the head of its backlog, how many resends of it wait, and every
   * attempt at it the log keeps (newest first, at most `maxAttempts`).
   */
  deliveriesOf(
    ids: readonly string[],
    ev: { eventId: string; height: number; idx: number; sealedAt: number },
    maxAttempts: number,
  ): Promise<{ backlog: Set<string>; heads: Set<string>; resends: Map<string, number>; attempts: EventAttempt[] }> {
    return this.read(async (c) => {
      const inBacklog = await c.query<{ id: string; head: boolean }>(
        `SELECT b.subscription_id AS id, NOT EXISTS (SELECT 1 FROM subscription_backlog p
             WHERE p.subscription_id = b.subscription_id AND (p.height, p.idx) < (b.height, b.idx)) AS head
         FROM subscription_backlog b WHERE b.subscription_id = ANY($1::text[]) AND b.height = $2 AND b.idx = $3`,
        [ids, ev.height, ev.idx],
      );
      const resends = await c.query<{ id: string; n: number }>(
        `SELECT subscription_id AS id, count(*)::int AS n FROM subscription_resends
         WHERE subscription_id = ANY($1::text[]) AND height = $2 AND idx = $3 GROUP BY subscription_id`,
        [ids, ev.height, ev.idx],
      );
      // Attempts at an event come after its seal: rows whose newest attempt is older are skipped.
      const attempts = await c.query<EventAttempt>(
        `SELECT d.subscription_id AS "subscriptionId", a.at, a.duration_ms AS "durationMs", a.status, a.error, a.excerpt
         FROM delivery_attempts d,
           unnest(d.event_ids, d.attempted_at, d.duration_ms, d.status, d.error, d.excerpt)
             WITH ORDINALITY AS a(event_id, at, duration_ms, status, error, excerpt, n)
         WHERE d.subscription_id = ANY($1::text[]) AND d.newest_at >= $2 AND a.event_id = $3
         ORDER BY a.at DESC, d.id DESC, a.n DESC LIMIT $4`,
        [ids, ev.sealedAt, ev.eventId, maxAttempts],
      );
      return {
        backlog: new Set(inBacklog.rows.map((r) => r.id)),
        heads: new Set(inBacklog.rows.filter((r) => r.head).map((r) => r.id)),
        resends: new Map(resends.rows.map((r) => [r.id, r.n])),
        attempts: attempts.rows.map((a) => ({ ...a, at: Number(a.at) })),
      };
    });
  }
}

/**
 * The heights a query may touch: its event's block, or the blocks sealed within its time range
 * (through the blocks' seal-time index); open ends are null. Null: no block can hold a match.
 */
async function heightRange(c: pg.PoolClient, q: EventQuery): Promise<{ lo: number | null; hi: number | null } | null> {
  if (q.eventId) return { lo: q.eventId.height, hi: q.eventId.height };
  if (q.fromMs === null && q.toMs === null) return { lo: null, hi: null };
  const r = await c.query<{ lo: number | null; hi: number | null }>(
    `SELECT min(height) AS lo, max(height) AS hi FROM blocks
     WHERE group_id = $1 AND ($2::bigint IS NULL OR sealed_at >= $2) AND ($3::bigint IS NULL OR sealed_at <= $3)`,
    [q.groupId, q.fromMs, q.toMs],
  );
  const row = r.rows[0];
  if (!row || row.lo === null) return null;
  return { lo: row.lo, hi: row.hi };
}
