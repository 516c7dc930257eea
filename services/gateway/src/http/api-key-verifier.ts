import { timingSafeEqual } from "node:crypto";
import { type ApiKeyRecord, hashKeySecret, parseApiKey } from "@evb/storage";

/** Where keys are looked up (ApiKeyStore). */
export interface ApiKeyLookup {
  find(id: string): Promise<{ record: ApiKeyRecord; secretSha256: Buffer } | null>;
}

interface Cached {
  found: { record: ApiKeyRecord; secretSha256: Buffer } | null;
  at: number;
}

/** Past this many cached ids (found or not) the oldest are dropped, so random ids cannot fill memory. */
const MAX_CACHED = 10_000;

const DUMMY = hashKeySecret("no key has this secret");

/**
 * Checks `Authorization: Bearer <key>` keys. Lookups are cached for `cacheMs` (found and unknown
 * ids alike), so a publish does not pay a Postgres round trip per request; a revoked key is
 * refused at the latest `cacheMs` after `npm run keys -- revoke`. When Postgres fails, a cached
 * answer is used however old it is (the gateway keeps serving known keys through an outage);
 * with none, the failure is thrown. The secret is compared in constant time, against a dummy
 * hash when the id is unknown, so the answer time does not tell whether an id exists.
 */
export class ApiKeyVerifier {
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<Cached>>();
  private readonly lookup: ApiKeyLookup;
  /** API_KEY_CACHE_MS: how old a cached answer may be. */
  readonly cacheMs: number;
  private readonly now: () => number;

  constructor(opts: { lookup: ApiKeyLookup; cacheMs: number; now: () => number }) {
    this.lookup = opts.lookup;
    this.cacheMs = opts.cacheMs;
    this.now = opts.now;
  }

  /**
   * The key's record when `key` is a live key, else null. Throws when storage fails and nothing is
   * cached. `maxAgeMs` (at most cacheMs): how old a cached answer may be for this call (a session's
   * re-check, SessionKey, asks for half of it).
   */
  async verify(key: string, maxAgeMs = this.cacheMs): Promise<ApiKeyRecord | null> {
    const parsed = parseApiKey(key);
    const entry = parsed ? await this.entry(parsed.id, Math.min(maxAgeMs, this.cacheMs)) : null;
    const found = entry?.found ?? null;
    const same = timingSafeEqual(found?.secretSha256 ?? DUMMY, hashKeySecret(parsed?.secret ?? key));
    if (!found || !same || found.record.revokedAt !== null) return null;
    return found.record;
  }

  private async entry(id: string, maxAgeMs: number): Promise<Cached> {
    const cached = this.cache.get(id);
    if (cached && this.now() - cached.at < maxAgeMs) return cached;
    let p = this.inflight.get(id);
    if (!p) {
      p = this.load(id, cached).finally(() => this.inflight.delete(id));
      this.inflight.set(id, p);
    }
    return p;
  }

  private async load(id: string, stale: Cached | undefined): Promise<Cached> {
    let found: Cached["found"];
    try {
      found = await this.lookup.find(id);
    } catch (err) {
      if (stale) return stale;
      throw err;
    }
    const fresh = { found, at: this.now() };
    this.cache.delete(id);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(id, fresh);
    return fresh;
  }
}
