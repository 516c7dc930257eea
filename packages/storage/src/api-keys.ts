import { createHash, randomBytes } from "node:crypto";

/** What a key may do. `admin` includes every other role. */
export const API_ROLES = ["publish", "subscribe", "read", "admin"] as const;
export type ApiRole = (typeof API_ROLES)[number];

/** A key's record, without its secret. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  roles: ApiRole[];
  /** Group ids the key may touch; `*` is every group. */
  groups: string[];
  /** Publishes per second refilled into the key's bucket; null = no limit. */
  publishRate: number | null;
  /** Bucket size (publishes at once); null = one second's worth of the rate. */
  publishBurst: number | null;
  createdAt: number;
  revokedAt: number | null;
}

const KEY = /^evbk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/**
 * A new key: `evbk_<id>_<secret>`, the id public (it names the key in lists and logs), the
 * secret 256 random bits. Only the secret's SHA-256 is stored: a key of that entropy cannot be
 * guessed from its hash, so no slow password hash is needed.
 */
export function newApiKey(): { id: string; key: string; secretSha256: Buffer } {
  const id = randomBytes(6).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  return { id, key: `evbk_${id}_${secret}`, secretSha256: hashKeySecret(secret) };
}

/** The id and secret of a key as sent, or null when it does not have a key's form. */
export function parseApiKey(key: string): { id: string; secret: string } | null {
  const m = KEY.exec(key);
  return m ? { id: m[1] as string, secret: m[2] as string } : null;
}

export function hashKeySecret(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}
