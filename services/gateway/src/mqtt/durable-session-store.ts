import type { Logger } from "@evb/domain";
import { type SessionStore, StoredSession } from "./session-store.ts";

/** The durable copy of the sessions (packages/storage's MqttSessionStore, table mqtt_sessions). */
export interface DurableSessions {
  /** Stores `session` for `clientId`, expiring `ttlMs` from now. */
  upsert(clientId: string, session: unknown, ttlMs: number): Promise<void>;
  /** The copy while it has not expired (with the ms it has left), else null. */
  load(clientId: string): Promise<{ session: unknown; ttlMs: number } | null>;
  drop(clientId: string): Promise<void>;
  /** Deletes at most `limit` expired copies; how many. */
  sweep(limit: number): Promise<number>;
}

/** How often, at most, a session whose filters did not change has its positions copied to Postgres, ms. */
const DURABLE_POSITIONS_EVERY_MS = 10_000;
/** How often pending position copies are looked at, and how often expired copies are swept, ms. */
const TICK_MS = 1_000;
const SWEEP_EVERY_MS = 60_000;
/** Expired copies deleted per sweep at most: one bounded DELETE a minute per gateway. */
const SWEEP_LIMIT = 500;

export interface DurableSessionStoreOptions {
  /** The fast copy, read first and written at every save (RedisSessionStore). */
  fast: SessionStore;
  durable: DurableSessions;
  now: () => number;
  logger: Logger;
  /** DURABLE_POSITIONS_EVERY_MS unless set (tests). */
  positionsEveryMs?: number;
}

interface Pending {
  session: StoredSession;
  ttlMs: number;
  seq: number;
}

/** What this gateway last wrote to Postgres for one connected client id. */
interface Copy {
  /** The filters last written (null: none written by this gateway yet). */
  filters: string | null;
  /** When that write began (-Infinity: never). */
  at: number;
  /** The latest save whose positions are not in Postgres yet. */
  pending: Pending | null;
  /** The seq of the latest save written to Postgres. */
  written: number;
  /** Postgres writes for this client, one at a time in order. */
  chain: Promise<void>;
  writing: boolean;
}

const filtersOf = (s: StoredSession): string => JSON.stringify(s.subscriptions.map((x) => [x.filter, x.qos, x.group]));

/**
 * Persistent sessions in Redis and, durably, in Postgres. Redis alone loses every session when it
 * loses its data (a flush, a Redis without persistence restarted): the session would start empty
 * and the events published while its client was away would never reach it. Here:
 *
 * - load reads Redis; when Redis has no key, the Postgres copy if it has not expired (written back
 *   to Redis, best effort); when either cannot answer it throws (the CONNECT is refused, the
 *   session never started empty).
 * - save writes Redis as RedisSessionStore does, and Postgres: at once and awaited (a failure is
 *   thrown) when the filters differ from what this gateway last wrote there for the client, or
 *   the connection is ending; a save that only moved positions is copied at most every
 *   `positionsEveryMs` per client (then, or at the next tick, the latest one), best effort: a
 *   failure is logged once per outage and tried again, never failing the connection. A session
 *   restored from Postgres therefore continues from positions up to that old: those QoS 1
 *   events come again (at least once), never a gap. While connected, a copy is kept
 *   `positionsEveryMs` past the session's expiry, so it cannot lapse between two copies.
 * - drop deletes both.
 *
 * Expired copies are deleted when found (load) and by a bounded sweep every minute.
 */
export class DurableSessionStore implements SessionStore {
  private readonly o: DurableSessionStoreOptions;
  private readonly every: number;
  private readonly copies = new Map<string, Copy>();
  private seq = 0;
  private failing = false;
  private timer?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;

  constructor(o: DurableSessionStoreOptions) {
    this.o = o;
    this.every = o.positionsEveryMs ?? DURABLE_POSITIONS_EVERY_MS;
  }

  /** Starts copying pending positions and sweeping expired copies. */
  start(): void {
    this.timer ??= setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.sweeper ??= setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  /** Stops the timers and waits for the copies under way (the sessions have ended before). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    await Promise.all([...this.copies.values()].map((c) => c.chain));
  }

  async load(clientId: string): Promise<StoredSession | null> {
    const fast = await this.o.fast.load(clientId);
    if (fast) return fast;
    const row = await this.o.durable.load(clientId);
    if (!row) return null;
    const parsed = StoredSession.safeParse(row.session);
    if (!parsed.success) {
      this.o.logger.warn({ clientId }, "the Postgres copy of an MQTT session is unreadable; the session starts empty");
      return null;
    }
    this.o.logger.info({ clientId }, "MQTT session restored from its Postgres copy (Redis had none)");
    await this.o.fast
      .save(clientId, parsed.data, row.ttlMs)
      .catch((err: unknown) => this.o.logger.warn({ err, clientId }, "could not write a restored MQTT session back to Redis"));
    return parsed.data;
  }

  async save(clientId: string, session: StoredSession, ttlMs: number, ending = false): Promise<void> {
    const fast = this.o.fast.save(clientId, session, ttlMs);
    const copy = this.copyOf(clientId);
    const save: Pending = { session, ttlMs, seq: ++this.seq };
    let durable: Promise<void> = Promise.resolve();
    if (ending || filtersOf(session) !== copy.filters) durable = this.write(copy, clientId, save, ending);
    else {
      copy.pending = save;
      if (this.o.now() - copy.at >= this.every && !copy.writing) durable = this.writePending(copy, clientId);
    }
    const [f, d] = await Promise.allSettled([fast, durable]);
    if (ending && this.copies.get(clientId) === copy) this.copies.delete(clientId);
    if (f.status === "rejected") throw f.reason;
    if (d.status === "rejected") throw d.reason;
  }

  async drop(clientId: string): Promise<void> {
    const chain = this.copies.get(clientId)?.chain ?? Promise.resolve();
    this.copies.delete(clientId);
    const durable = chain.then(() => this.o.durable.drop(clientId));
    const [f, d] = await Promise.allSettled([this.o.fast.drop(clientId), durable]);
    if (f.status === "rejected") throw f.reason;
    if (d.status === "rejected") throw d.reason;
  }

  /** Copies the pending positions of the clients whose last copy is `positionsEveryMs` old. */
  private tick(): void {
    const now = this.o.now();
    for (const [clientId, copy] of this.copies)
      if (copy.pending && !copy.writing && now - copy.at >= this.every) void this.writePending(copy, clientId);
  }

  /** Best effort: a failure leaves the positions pending (tried again at the next save or tick), logged once per outage. */
  private writePending(copy: Copy, clientId: string): Promise<void> {
    const pending = copy.pending;
    if (!pending) return Promise.resolve();
    return this.write(copy, clientId, pending, false).catch((err: unknown) => {
      if (!this.failing) this.o.logger.warn({ err }, "could not copy MQTT session positions to Postgres; trying again");
      this.failing = true;
    });
  }

  /** Writes `save` to Postgres after the client's earlier writes; throws when it failed. */
  private write(copy: Copy, clientId: string, save: Pending, ending: boolean): Promise<void> {
    const run = copy.chain.then(async () => {
      if (save.seq <= copy.written) return; // a later save is there already
      copy.writing = true;
      const at = this.o.now();
      try {
        // Kept past the expiry while connected: the next copy may be up to `every` away.
        await this.o.durable.upsert(clientId, save.session, ending ? save.ttlMs : save.ttlMs + this.every);
      } finally {
        copy.writing = false;
      }
      copy.written = save.seq;
      copy.filters = filtersOf(save.session);
      copy.at = at;
      if (copy.pending && copy.pending.seq <= save.seq) copy.pending = null;
      if (this.failing) this.o.logger.info("MQTT session copies are written to Postgres again");
      this.failing = false;
    });
    copy.chain = run.catch(() => {});
    return run;
  }

  private copyOf(clientId: string): Copy {
    let copy = this.copies.get(clientId);
    if (!copy) {
      copy = { filters: null, at: Number.NEGATIVE_INFINITY, pending: null, written: 0, chain: Promise.resolve(), writing: false };
      this.copies.set(clientId, copy);
    }
    return copy;
  }

  private async sweep(): Promise<void> {
    try {
      const n = await this.o.durable.sweep(SWEEP_LIMIT);
      if (n > 0) this.o.logger.debug({ deleted: n }, "expired MQTT session copies deleted");
    } catch (err) {
      this.o.logger.warn({ err }, "could not delete expired MQTT session copies; trying again in a minute");
    }
  }
}
