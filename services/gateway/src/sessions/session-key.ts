import type { Logger } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import type { CallerChecks } from "../http/access-control.ts";
import { ownerId } from "../http/caller-address.ts";

/** Who opened a STOMP or MQTT session: the key it logged in with (null: none), and the Authorization value that named it. */
export interface SessionLogin {
  key: ApiKeyRecord | null;
  /** The credentials as checked (`Bearer <key>`); absent when the session has no key to check again. */
  authorization?: string;
}

/** The shortest re-check beat, ms: API_KEY_CACHE_MS=0 (every request looked up) does not become a timer per millisecond per session. */
const MIN_BEAT_MS = 250;

/** What a key is now: its record (null: the session has none), or revoked (no longer verifies). */
export type KeyNow = ApiKeyRecord | null | "revoked";

export interface SessionKeyOptions {
  checks: CallerChecks;
  login: SessionLogin;
  /** The caller's address: the identity of a session without a key (ownerId). */
  remoteIp: string;
  /** The key no longer verifies (revoked, deleted): the session is to end. Called once. */
  revoked: () => void;
  logger: Logger;
}

/**
 * The API key of one long-lived session (STOMP or MQTT), kept true after login: a key that is
 * revoked, or whose roles or groups change, is seen by the session as by an HTTP request. Each
 * publish or subscribe asks `permits`, which verifies the credentials again through the key
 * verifier's cache (no Postgres query per frame); a timer every half API_KEY_CACHE_MS verifies
 * them with at most half that age, so a revoked key's session ends (`revoked`) within
 * API_KEY_CACHE_MS even when it sends nothing (within 250 ms when it is under 500). While the keys cannot be read (Postgres away, no
 * cached answer) the last known record stands, as the HTTP mounts keep serving known keys.
 */
export class SessionKey {
  private readonly o: SessionKeyOptions;
  private key: ApiKeyRecord | null;
  private gone = false;
  private timer?: NodeJS.Timeout;

  constructor(o: SessionKeyOptions) {
    this.o = o;
    this.key = o.login.key;
  }

  /** Whose the session is: `key:<id>` with a key, else the caller's address (docs/security.md, "Sessions"). */
  get owner(): string {
    return ownerId({ address: this.o.remoteIp, keyId: this.o.login.key?.id ?? null });
  }

  /** Starts the re-check beat (sessions with a key only). */
  start(): void {
    const every = this.o.checks.keyRecheckMs;
    if (this.timer || !this.watched() || every === undefined) return;
    const half = Math.max(MIN_BEAT_MS, Math.floor(every / 2));
    this.timer = setInterval(() => void this.current(half), half);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The key as it is now (verified again, through the cache; `maxAgeMs`: how old a cached answer may be). */
  async current(maxAgeMs?: number): Promise<KeyNow> {
    if (this.gone) return "revoked";
    const authorization = this.o.login.authorization;
    if (!this.watched() || authorization === undefined) return this.key;
    const r = await this.o.checks.authorization(authorization, maxAgeMs);
    if (this.gone) return "revoked";
    if (r.ok && r.key) this.key = r.key;
    else if (r.ok || !r.unavailable) {
      this.gone = true;
      this.stop();
      this.o.logger.info({ keyId: this.o.login.key?.id }, "a session's API key no longer verifies; the session ends");
      this.o.revoked();
      return "revoked";
    }
    return this.key;
  }

  /** CallerChecks.permits with the key as it is now: a revoked key is forbidden everything. */
  async permits(op: Parameters<CallerChecks["permits"]>[1], groupId: string | undefined): ReturnType<CallerChecks["permits"]> {
    const key = await this.current();
    if (key === "revoked") return "forbidden";
    return this.o.checks.permits(key, op, groupId);
  }

  /** The session's checks with `permits` answered for its key as it is now (the key argument is ignored). */
  checks(): CallerChecks {
    return { ...this.o.checks, permits: (_key, op, groupId) => this.permits(op, groupId) };
  }

  private watched(): boolean {
    return this.o.login.key !== null;
  }
}
