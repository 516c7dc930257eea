import type pg from "pg";

/** A persistent MQTT session's durable copy as read back: its JSON and how long it has left, ms. */
export interface MqttSessionRow {
  session: unknown;
  /** Milliseconds until it expires, by the database's clock (> 0). */
  ttlMs: number;
}

/**
 * The durable copy of persistent MQTT sessions (migration 026, table mqtt_sessions), beside the
 * one the gateway keeps in Redis: what a session is resumed from when Redis lost its key. The
 * expiry is kept by the database's clock, so gateways whose clocks differ agree on it. Each call
 * is one statement on the pool, bounded by its query timeout (poolOptions).
 */
export class MqttSessionStore {
  private readonly pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** Stores `session` (any JSON) for `clientId`, expiring `ttlMs` from now. */
  async upsert(clientId: string, session: unknown, ttlMs: number): Promise<void> {
    const ms = Math.max(1, Math.round(ttlMs));
    await this.pool.query(
      `INSERT INTO mqtt_sessions (client_id, session, expires_at, updated_at)
       VALUES ($1, $2::jsonb, now() + $3 * interval '1 millisecond', now())
       ON CONFLICT (client_id) DO UPDATE SET session = EXCLUDED.session, expires_at = EXCLUDED.expires_at, updated_at = now()`,
      [clientId, JSON.stringify(session), ms],
    );
  }

  /** The session stored for `clientId` while it has not expired, else null (an expired row is deleted on the way). */
  async load(clientId: string): Promise<MqttSessionRow | null> {
    const r = await this.pool.query<{ session: unknown; ttlMs: number }>(
      `WITH expired AS (DELETE FROM mqtt_sessions WHERE client_id = $1 AND expires_at <= now())
       SELECT session, ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint AS "ttlMs"
       FROM mqtt_sessions WHERE client_id = $1 AND expires_at > now()`,
      [clientId],
    );
    const row = r.rows[0];
    return row ? { session: row.session, ttlMs: Math.max(1, Number(row.ttlMs)) } : null;
  }

  async drop(clientId: string): Promise<void> {
    await this.pool.query("DELETE FROM mqtt_sessions WHERE client_id = $1", [clientId]);
  }

  /** Deletes at most `limit` expired sessions; how many it deleted (call again while it returns `limit`). */
  async sweep(limit: number): Promise<number> {
    const r = await this.pool.query(
      `DELETE FROM mqtt_sessions WHERE client_id IN (
         SELECT client_id FROM mqtt_sessions WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
      [Math.max(1, Math.floor(limit))],
    );
    return r.rowCount ?? 0;
  }
}
