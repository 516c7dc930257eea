import type pg from "pg";
import type { ApiKeyRecord, ApiRole } from "./api-keys.ts";

const COLUMNS = `id, name, roles, groups, publish_rate AS "publishRate", publish_burst AS "publishBurst",
  created_at AS "createdAt", revoked_at AS "revokedAt"`;

interface Row extends Omit<ApiKeyRecord, "createdAt" | "revokedAt"> {
  createdAt: string | number;
  revokedAt: string | number | null;
}

const toRecord = (r: Row): ApiKeyRecord => ({
  ...r,
  createdAt: Number(r.createdAt),
  revokedAt: r.revokedAt === null ? null : Number(r.revokedAt),
});

/** API keys in Postgres (table api_keys): what `npm run keys` writes and the gateway reads. */
export class ApiKeyStore {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  async create(key: {
    id: string;
    name: string;
    secretSha256: Buffer;
    roles: readonly ApiRole[];
    groups: readonly string[];
    publishRate: number | null;
    publishBurst: number | null;
    now: number;
  }): Promise<ApiKeyRecord> {
    const r = await this.pool.query<Row>(
      `INSERT INTO api_keys (id, name, secret_sha256, roles, groups, publish_rate, publish_burst, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [key.id, key.name, key.secretSha256, key.roles, key.groups, key.publishRate, key.publishBurst, key.now],
    );
    return toRecord(r.rows[0] as Row);
  }

  /** A key and its secret's hash, revoked or not; null when no key has this id. */
  async find(id: string): Promise<{ record: ApiKeyRecord; secretSha256: Buffer } | null> {
    const r = await this.pool.query<Row & { secretSha256: Buffer }>(
      `SELECT ${COLUMNS}, secret_sha256 AS "secretSha256" FROM api_keys WHERE id = $1`,
      [id],
    );
    const row = r.rows[0];
    if (!row) return null;
    const { secretSha256, ...rest } = row;
    return { record: toRecord(rest), secretSha256 };
  }

  async list(): Promise<ApiKeyRecord[]> {
    const r = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM api_keys ORDER BY created_at, id`);
    return r.rows.map(toRecord);
  }

  /** Revokes a key; false when no live key has this id. */
  async revoke(id: string, now: number): Promise<boolean> {
    const r = await this.pool.query("UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL", [id, now]);
    return (r.rowCount ?? 0) > 0;
  }
}
