import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/**
 * Secrets at rest (docs/security.md, "Secrets at rest"): the subscriptions' signing secrets as
 * Postgres and their Kafka records keep them. With SECRETS_KEY set a secret is stored as
 * `v1:` + base64(iv | tag | AES-256-GCM ciphertext); without it, as the secret itself. A value
 * without the prefix (a row written before the key was set) is read as it is, so setting the key
 * needs no migration: each secret is sealed the next time its settings are written.
 */

/** The prefix of a sealed secret: the version of the scheme (AES-256-GCM, 12-byte IV, 16-byte tag). */
const SEALED = "v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** A sealed secret that cannot be opened: no SECRETS_KEY, another one, or a damaged value. Never a reason to send unsigned. */
export class SecretsKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SecretsKeyError";
  }
}

/** SECRETS_KEY as bytes: 64 hex digits or the base64 of 32 bytes; null when empty. Throws on anything else. */
export function parseSecretsKey(text: string): Buffer | null {
  const t = text.trim();
  if (t === "") return null;
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : /^[A-Za-z0-9+/]{43}=?$/.test(t) ? Buffer.from(t, "base64") : null;
  if (key?.length !== KEY_BYTES) throw new Error("SECRETS_KEY must be 32 bytes, written as 64 hex digits or in base64 (44 characters)");
  return key;
}

/** `plain` sealed with `key` (a fresh random IV each time). */
export function sealSecret(plain: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ct = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64");
}

/**
 * The secret a stored value holds: a sealed one opened with `key`, any other as it is (stored
 * before SECRETS_KEY was set). Throws SecretsKeyError when a sealed value cannot be opened.
 */
export function openSecret(stored: string, key: Buffer | null): string {
  if (!stored.startsWith(SEALED)) return stored;
  if (!key) throw new SecretsKeyError("it is encrypted at rest and SECRETS_KEY is not set; set the SECRETS_KEY it was stored with");
  const raw = Buffer.from(stored.slice(SEALED.length), "base64");
  if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretsKeyError("its stored value is damaged (too short to be sealed with SECRETS_KEY)");
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretsKeyError(
      "it cannot be decrypted with this SECRETS_KEY (another key than it was stored with, or a damaged value); every service must share one SECRETS_KEY",
    );
  }
}

/** The key this process seals and opens with (SECRETS_KEY); null: secrets are stored readable. */
let processKey: Buffer | null = null;

/** Sets the key of this process (each service's start, from SECRETS_KEY); null: secrets are stored as they are. */
export function useSecretsKey(key: Buffer | null): void {
  processKey = key;
}

/** What Postgres stores for `secret`: sealed with this process's key, if it has one (a value already sealed is kept). */
export function storedSecret(secret: string | null): string | null {
  if (secret === null || processKey === null || secret.startsWith(SEALED)) return secret;
  return sealSecret(secret, processKey);
}

/** The secret a stored value holds, with this process's key; the error names the subscription and SECRETS_KEY. */
export function readSecret(stored: string | null, subscriptionId: string): string | null {
  if (stored === null) return null;
  try {
    return openSecret(stored, processKey);
  } catch (err) {
    if (err instanceof SecretsKeyError) throw new SecretsKeyError(`the signing secret of subscription ${subscriptionId}: ${err.message}`);
    throw err;
  }
}

/**
 * A service's start: takes SECRETS_KEY (checked by the config) as this process's key, or warns
 * that the signing secrets are stored readable when it is not set.
 */
export function secretsAtRest(secretsKey: string | undefined, logger: { warn(obj: object, msg: string): void }): void {
  const key = parseSecretsKey(secretsKey ?? "");
  useSecretsKey(key);
  if (!key)
    logger.warn(
      { event: "secrets_readable" },
      "SECRETS_KEY is not set: subscriptions' signing secrets are stored readable in Postgres and in their Kafka records (docs/security.md)",
    );
}
