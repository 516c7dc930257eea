import type { Logger } from "@evb/domain";
import type { SessionStore, StoredSession, StoredSubscription } from "./session-store.ts";

export interface SessionPersistenceOptions {
  store: SessionStore;
  clientId: string;
  /** Whose the session is (SessionKey.owner): stored with it, so that only its owner resumes it. */
  owner: string;
  /** How long the session is kept after its connection ends, ms (> 0). */
  ttlMs: number;
  /** The session's filters and positions as they are now. */
  snapshot: () => StoredSubscription[];
  /** How often the positions are written while connected, ms. */
  everyMs: number;
  now: () => number;
  logger: Logger;
}

/**
 * Keeps a persistent session's positions in the store while it is connected, so that a gateway
 * killed mid-stream loses none: the filters are written at once when they change (before the
 * SUBACK), the positions every `everyMs` when they moved, and all of it once more when the
 * connection ends. A gateway killed between two writes leaves positions up to `everyMs` old: the
 * resumed session gets those events again (at least once), never a gap. A failed write is tried
 * again at the next tick.
 */
export class SessionPersistence {
  private readonly o: SessionPersistenceOptions;
  private timer?: NodeJS.Timeout;
  private saved = "";
  private savedAt = 0;
  private writing: Promise<void> = Promise.resolve();

  constructor(o: SessionPersistenceOptions) {
    this.o = o;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(false), this.o.everyMs);
    this.timer.unref();
  }

  /**
   * Writes the session when it changed (or `force`, or before its key would expire). Writes run
   * one at a time in call order, so the last one wins. Throws only when `force` is set and the
   * write failed. `ending`: the connection's last write (close).
   */
  flush(force: boolean, ending = false): Promise<void> {
    const run = this.writing.then(() => this.write(force, ending));
    this.writing = run.catch(() => {});
    return force ? run : this.writing;
  }

  /** The connection ended: one last write. */
  async close(): Promise<void> {
    this.stop();
    await this.flush(true, true).catch(() => {});
  }

  /** No more writes from the timer (the session is dropped instead). */
  stop(): void {
    clearInterval(this.timer);
  }

  private async write(force: boolean, ending: boolean): Promise<void> {
    const { o } = this;
    const session: StoredSession = { v: 1, owner: o.owner, subscriptions: o.snapshot() };
    const json = JSON.stringify(session);
    const stale = o.now() - this.savedAt > o.ttlMs / 3;
    if (!force && json === this.saved && !stale) return;
    try {
      await o.store.save(o.clientId, session, o.ttlMs, ending);
      this.saved = json;
      this.savedAt = o.now();
    } catch (err) {
      o.logger.warn({ err, clientId: o.clientId }, "could not store an MQTT session; trying again");
      if (force) throw err;
    }
  }
}
