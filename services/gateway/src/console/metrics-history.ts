import { type Logger, redisKeys, TIMED_OUT, withTimeout } from "@evb/domain";
import type { Redis } from "ioredis";

/**
 * The history of the console's rate charts (admin/metricsHistory): every CONSOLE_HISTORY_INTERVAL_MS
 * one gateway of the deployment writes each group's growing totals to Redis, kept for an hour, so
 * a console opened now shows the hour before it.
 *
 * Several gateways: the totals the charts show are of the deployment, not of one gateway. Events
 * sealed (the ledger's count) and callbacks delivered (the subscriptions' counters) are read from
 * Postgres, the same for every gateway, so one writer per slot is enough: the first gateway to
 * take the slot's key (SET NX) samples it, the others skip it (no duplicate, no double reads).
 * Publishes answered are counted in each gateway's process: each adds what it answered since its
 * last tick to one counter per group (INCRBY), so the counter the slot's writer reads is the sum
 * over every gateway, and a gateway that restarts adds from 0 again without a dip. Every gateway
 * adds at the slot's start and the writer reads a moment later (SETTLE_MS), so a sample holds
 * every gateway's adds of its slot (one that lands later still counts, in the next sample).
 */

/** How long samples are kept: the charts' window. */
export const HISTORY_KEEP_MS = 3_600_000;
/** The longest one Redis call of the history may take; past it the tick (or the read) gives up. */
const REDIS_TIMEOUT_MS = 1_000;
/** How long after the slot's start the writer reads, at most: the other gateways' adds land meanwhile. */
const SETTLE_MS = 1_000;
/** The longest the Postgres reads of one group's sample may take. */
const FIGURES_TIMEOUT_MS = 5_000;

/** One group's growing totals at `at` (epoch ms, on the writing gateway's clock). */
export interface HistorySample {
  at: number;
  /** Events in the group's ledger (admin/group/general's transactionCount). */
  sealed: number;
  /** The sum of the group's live subscriptions' delivered counters. */
  delivered: number;
  /** Publishes answered in the group by every gateway since the counter started. */
  publishes: number;
}

/** Where the samples live, shared by every gateway of a deployment: Redis, or a fake in tests. */
export interface HistoryPort {
  /** Adds `n` publishes answered in `group` to the deployment's counter. */
  addPublishes(group: string, n: number): Promise<void>;
  /** True for the first caller only: the one that samples the slot starting at `slot`. */
  claimSlot(slot: number, holdMs: number): Promise<boolean>;
  /** The deployment's publishes counter of `group` (0 before the first add). */
  publishes(group: string): Promise<number>;
  /** Appends a sample and drops those older than `keepFrom`. */
  append(group: string, sample: HistorySample, keepFrom: number): Promise<void>;
  /** The group's samples taken at or after `since`, oldest first. */
  read(group: string, since: number): Promise<HistorySample[]>;
}

/** A Redis call that answers in time, or fails: Redis away costs a sample, never a wait. */
async function bounded<T>(p: Promise<T>): Promise<T> {
  const r = await withTimeout(p, REDIS_TIMEOUT_MS);
  if (r === TIMED_OUT) throw new Error(`Redis did not answer within ${REDIS_TIMEOUT_MS} ms`);
  return r;
}

const isSample = (s: unknown): s is HistorySample =>
  typeof s === "object" &&
  s !== null &&
  ["at", "sealed", "delivered", "publishes"].every((k) => Number.isFinite((s as Record<string, unknown>)[k]));

/** The history in Redis under REDIS_PREFIX: one sorted set per group scored by sample time, trimmed to the hour. */
export class RedisHistory implements HistoryPort {
  private readonly redis: Redis;
  private readonly keys: ReturnType<typeof redisKeys>;
  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.keys = redisKeys(prefix);
  }

  async addPublishes(group: string, n: number): Promise<void> {
    const key = this.keys.consoleHistoryPublishes(group);
    // Expires only when no gateway has added for two windows (a deployment gone).
    await bounded(
      this.redis
        .multi()
        .incrby(key, n)
        .pexpire(key, 2 * HISTORY_KEEP_MS)
        .exec(),
    );
  }

  async claimSlot(slot: number, holdMs: number): Promise<boolean> {
    return (await bounded(this.redis.set(this.keys.consoleHistorySlot(slot), "1", "PX", holdMs, "NX"))) === "OK";
  }

  async publishes(group: string): Promise<number> {
    const v = await bounded(this.redis.get(this.keys.consoleHistoryPublishes(group)));
    const n = Number(v ?? 0);
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  }

  async append(group: string, sample: HistorySample, keepFrom: number): Promise<void> {
    const key = this.keys.consoleHistory(group);
    await bounded(
      this.redis
        .multi()
        .zadd(key, sample.at, JSON.stringify(sample))
        .zremrangebyscore(key, "-inf", `(${keepFrom}`)
        .pexpire(key, HISTORY_KEEP_MS)
        .exec(),
    );
  }

  async read(group: string, since: number): Promise<HistorySample[]> {
    const members = await bounded(this.redis.zrangebyscore(this.keys.consoleHistory(group), since, "+inf"));
    const samples: HistorySample[] = [];
    for (const m of members) {
      try {
        const s: unknown = JSON.parse(m);
        if (isSample(s)) samples.push({ at: s.at, sealed: s.sealed, delivered: s.delivered, publishes: s.publishes });
      } catch {
        // Not a sample of ours: left out.
      }
    }
    return samples;
  }
}

export interface HistorySamplerDeps {
  port: HistoryPort;
  groups: readonly string[];
  intervalMs: number;
  /** Publishes this gateway answered in `group` since it started (its own counter). */
  answered: (group: string) => number;
  /** The group's totals read from the ledger now (Postgres). */
  figures: (group: string) => Promise<{ sealed: number; delivered: number }>;
  now: () => number;
  logger: Logger;
}

/**
 * Ticks at each slot boundary (multiples of the interval on the clock): adds this gateway's new
 * publishes to the shared counters, then, if it takes the slot, appends one sample per group. A
 * tick that fails (Redis or Postgres away or slow) is skipped, logged once per outage; the next
 * one tries again. Ticks never overlap; nothing here is waited on by a request or by readiness.
 */
export class HistorySampler {
  private readonly deps: HistorySamplerDeps;
  /** Per group: this gateway's publishes already added to the shared counter. */
  private readonly added = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private failing = false;

  constructor(deps: HistorySamplerDeps) {
    this.deps = deps;
  }

  start(): void {
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.closed) return;
    const { intervalMs, now } = this.deps;
    this.timer = setTimeout(
      () => {
        this.running = this.tick().finally(() => {
          this.running = undefined;
          this.schedule();
        });
      },
      intervalMs - (now() % intervalMs),
    );
    this.timer.unref();
  }

  /** One slot's work; never rejects. */
  async tick(): Promise<void> {
    const { port, groups, intervalMs, now, logger } = this.deps;
    const slot = now() - (now() % intervalMs);
    try {
      await this.addPublishes();
      // Held for two slots: a gateway whose clock is a little late still finds the slot taken.
      if (await port.claimSlot(slot, 2 * intervalMs)) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(SETTLE_MS, intervalMs / 5)).unref());
        for (const group of groups) await this.sample(group);
      }
      if (this.failing) logger.info("console history: sampling again");
      this.failing = false;
    } catch (err) {
      if (!this.failing)
        logger.warn({ err }, "console history: a sample was skipped (Redis or Postgres unavailable); retried each interval");
      this.failing = true;
    }
  }

  private async addPublishes(): Promise<void> {
    for (const group of this.deps.groups) {
      const total = this.deps.answered(group);
      const n = total - (this.added.get(group) ?? 0);
      if (n <= 0) continue;
      await this.deps.port.addPublishes(group, n);
      this.added.set(group, total);
    }
  }

  private async sample(group: string): Promise<void> {
    const { port, now } = this.deps;
    const [figures, publishes] = await Promise.all([withTimeout(this.deps.figures(group), FIGURES_TIMEOUT_MS), port.publishes(group)]);
    if (figures === TIMED_OUT) throw new Error(`the ledger's figures of group ${group} took over ${FIGURES_TIMEOUT_MS} ms`);
    const at = now();
    await port.append(group, { at, ...figures, publishes }, at - HISTORY_KEEP_MS);
  }
}
