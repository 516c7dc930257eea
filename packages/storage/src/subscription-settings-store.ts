import type pg from "pg";
import { DEFAULT_SETTINGS, isDefaultSettings, type SubscriptionSettings } from "@evb/domain";
import { inTransaction } from "./pool.ts";
import { readSecret, storedSecret } from "./secret-box.ts";

/** Selects a `SubscriptionSettings` (bigint epoch columns come back as text and are mapped). */
const COLUMNS = `paused, paused_at::float8 AS "pausedAt", max_rate AS "maxRate", retry_max_attempts AS "retryMaxAttempts",
  retry_base_ms AS "retryBaseMs", retry_max_ms AS "retryMaxMs", delivery_window AS "deliveryWindow",
  secret, previous_secret AS "previousSecret", previous_until::float8 AS "previousUntil", alert_url AS "alertUrl", headers,
  body_mode AS "bodyMode", content_filter AS "filter"`;

/** The settings with their secrets as the row stores them (secret-box.ts: sealed when SECRETS_KEY is set). */
function params(id: string, s: SubscriptionSettings, now: number): unknown[] {
  return [
    id,
    s.paused,
    s.pausedAt,
    s.maxRate,
    s.retryMaxAttempts,
    s.retryBaseMs,
    s.retryMaxMs,
    s.deliveryWindow,
    storedSecret(s.secret),
    storedSecret(s.previousSecret),
    s.previousUntil,
    now,
    s.alertUrl,
    storedSecret(s.headers),
    s.bodyMode,
    s.filter,
  ];
}

/** Stored settings with their secrets opened; throws SecretsKeyError (naming SECRETS_KEY) when one cannot be. */
function opened(id: string, s: SubscriptionSettings): SubscriptionSettings {
  if (s.secret === null && s.previousSecret === null && s.headers === null) return s;
  return { ...s, secret: readSecret(s.secret, id), previousSecret: readSecret(s.previousSecret, id), headers: readSecret(s.headers, id) };
}

const INSERT = `INSERT INTO subscription_settings (subscription_id, paused, paused_at, max_rate, retry_max_attempts, retry_base_ms,
  retry_max_ms, delivery_window, secret, previous_secret, previous_until, updated_at, alert_url, headers, body_mode, content_filter)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;

/**
 * Settings per subscription (`subscription_settings`, migration 022): written by the gateway
 * (admin/subscriptionSettings, subscribe's optional parameters), read by every notifier at each
 * delivery slice, so that all of them enforce the same settings whichever takes the job. The
 * secrets (and the custom headers, migration 029) go nowhere else but the subscription's Kafka
 * record; nothing here logs them. With
 * SECRETS_KEY set they are stored encrypted (secret-box.ts); `get` and `change` open them, and a
 * secret that cannot be opened is an error, never a subscription without its own secret.
 */
export class SubscriptionSettingsStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /**
   * The subscription's settings; the deployment's (`DEFAULT_SETTINGS`) when it has none of its own.
   * Throws SecretsKeyError when its secret is encrypted with another SECRETS_KEY (or none is set).
   */
  async get(id: string): Promise<SubscriptionSettings> {
    return opened(id, await this.stored(id));
  }

  /** The settings with the secrets as stored (sealed with SECRETS_KEY, if it was set): what the subscription's Kafka record carries. */
  async stored(id: string): Promise<SubscriptionSettings> {
    const r = await this.pool.query<SubscriptionSettings>(`SELECT ${COLUMNS} FROM subscription_settings WHERE subscription_id = $1`, [id]);
    return r.rows[0] ?? DEFAULT_SETTINGS;
  }

  /**
   * Changes the settings under the row's lock: `decide` gets them as they stand and answers the
   * new ones (or null to write nothing). Concurrent changes of one subscription are serialised,
   * so a rotation never loses the secret another one just made.
   */
  async change<T extends { settings: SubscriptionSettings }>(
    id: string,
    now: number,
    decide: (current: SubscriptionSettings) => T | null,
  ): Promise<T | null> {
    return inTransaction(this.pool, async (c) => {
      // A row to lock, even for a subscription never configured (the default values).
      await c.query(
        "INSERT INTO subscription_settings (subscription_id, updated_at) VALUES ($1, $2) ON CONFLICT (subscription_id) DO NOTHING",
        [id, now],
      );
      const r = await c.query<SubscriptionSettings>(`SELECT ${COLUMNS} FROM subscription_settings WHERE subscription_id = $1 FOR UPDATE`, [
        id,
      ]);
      const out = decide(opened(id, r.rows[0] ?? DEFAULT_SETTINGS));
      if (out)
        await c.query(
          `UPDATE subscription_settings SET paused = $2, paused_at = $3, max_rate = $4, retry_max_attempts = $5, retry_base_ms = $6,
             retry_max_ms = $7, delivery_window = $8, secret = $9, previous_secret = $10, previous_until = $11, updated_at = $12,
             alert_url = $13, headers = $14, body_mode = $15, content_filter = $16
           WHERE subscription_id = $1`,
          params(id, out.settings, now),
        );
      return out;
    });
  }

  /** The ids of `ids` that are paused (for listSubscription and deadLetters). */
  async pausedOf(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const r = await this.pool.query<{ id: string }>(
      "SELECT subscription_id AS id FROM subscription_settings WHERE paused AND subscription_id = ANY($1)",
      [ids],
    );
    return new Set(r.rows.map((x) => x.id));
  }

  /** The alert URLs of those of `ids` that have one (for the console's admin/subscriptionStates). */
  async alertUrlsOf(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const r = await this.pool.query<{ id: string; url: string }>(
      "SELECT subscription_id AS id, alert_url AS url FROM subscription_settings WHERE alert_url IS NOT NULL AND subscription_id = ANY($1)",
      [ids],
    );
    return new Map(r.rows.map((x) => [x.id, x.url]));
  }

  /**
   * Puts back a rebuilt ledger's settings as the subscription's record carried them (a sealed
   * secret as it is; a readable one sealed when SECRETS_KEY is set); a row already there is kept.
   */
  static async restore(c: pg.PoolClient, id: string, s: SubscriptionSettings, now: number): Promise<void> {
    if (isDefaultSettings(s)) return;
    await c.query(`${INSERT} ON CONFLICT (subscription_id) DO NOTHING`, params(id, s, now));
  }
}
