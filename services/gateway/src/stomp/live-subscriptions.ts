import type { Redis } from "ioredis";
import { z } from "zod";
import { bestEffort, type Logger, redisKeys } from "@evb/domain";

/** One live STOMP or MQTT subscription as admin/listSubscription shows it (protocols.md 4). */
export const LiveRecord = z.object({
  id: z.string(),
  /** Absent: `stomp` (records written before MQTT existed). */
  interfaceType: z.enum(["stomp", "mqtt"]).optional(),
  /** The node instance (ip:port) whose listing shows it. */
  node: z.string(),
  groupId: z.string(),
  topicName: z.string(),
  remoteIp: z.string(),
  createdAt: z.number(),
  delivered: z.number(),
  notifiedAt: z.number().nullable(),
});
export type LiveRecord = z.infer<typeof LiveRecord>;

/** What listSubscription reads: the live records of a group, from every gateway. */
export interface LiveSubscriptionSource {
  list(groupId: string): Promise<LiveRecord[]>;
}

export interface LiveSubscriptionsOptions {
  redis: Redis;
  prefix: string;
  gatewayId: string;
  /** How long a gateway's records outlive its last refresh, ms; refreshed every third of it. */
  ttlMs: number;
  logger: Logger;
}

/** The field that keeps a gateway's hash in existence with no subscription: a missing hash means a gone gateway. */
const ALIVE_FIELD = "-";
const REDIS_TIMEOUT_MS = 1_000;

/**
 * The live STOMP subscriptions of this gateway: the set that answers 100507 (a subscription id
 * live here), and their copy in Redis for admin/listSubscription on any gateway. The copy is one
 * hash per gateway process that expires `ttlMs` after its last refresh, so a killed gateway's
 * subscriptions leave the listing by themselves; a clean close deletes it at once. Counters are
 * written at the next refresh. Redis failures cost the listing, never a subscription.
 */
export class LiveSubscriptions implements LiveSubscriptionSource {
  private readonly o: LiveSubscriptionsOptions;
  private readonly local = new Map<string, LiveRecord>();
  private readonly changed = new Set<string>();
  /** Ended since the last write: their fields are deleted with it. */
  private readonly dropped = new Set<string>();
  private readonly keys: { index: string; hash: string };
  private timer?: NodeJS.Timeout;
  /**
   * Adds and removes are written together: at the end of the turn, or, while such a write is on
   * its way, right after it (an MQTT SUBSCRIBE of 1,000 filters is 1,000 adds, not 1,000 writes).
   */
  private soon?: NodeJS.Immediate;
  private writing = false;
  private again = false;

  constructor(o: LiveSubscriptionsOptions) {
    this.o = o;
    const k = redisKeys(o.prefix);
    this.keys = { index: k.stompGateways, hash: k.stompSubscriptions(o.gatewayId) };
  }

  start(): void {
    this.timer ??= setInterval(() => void this.refresh(), Math.max(100, Math.floor(this.o.ttlMs / 3)));
    this.timer.unref();
  }

  has(id: string): boolean {
    return this.local.has(id);
  }

  add(record: LiveRecord): void {
    this.local.set(record.id, record);
    this.changed.add(record.id);
    this.dropped.delete(record.id);
    this.writeSoon();
  }

  delivered(id: string, at: number): void {
    const r = this.local.get(id);
    if (!r) return;
    r.delivered++;
    r.notifiedAt = at;
    this.changed.add(id);
  }

  remove(id: string): void {
    if (!this.local.delete(id)) return;
    this.changed.delete(id);
    this.dropped.add(id);
    this.writeSoon();
  }

  private writeSoon(): void {
    if (this.soon) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    this.soon = setImmediate(() => {
      this.soon = undefined;
      this.writing = true;
      void this.refresh().finally(() => {
        this.writing = false;
        if (this.again) {
          this.again = false;
          this.writeSoon();
        }
      });
    });
  }

  /** Writes the records changed and drops the ones ended since the last refresh, and keeps the hash alive. */
  private refresh(): Promise<void> {
    const fields: string[] = [ALIVE_FIELD, "1"];
    for (const id of this.changed) {
      const r = this.local.get(id);
      if (r) fields.push(id, JSON.stringify(r));
    }
    this.changed.clear();
    const dropped = [...this.dropped];
    this.dropped.clear();
    const { index, hash } = this.keys;
    const ttl = this.o.ttlMs;
    return this.write("list STOMP subscriptions", () =>
      (dropped.length > 0 ? this.o.redis.multi().hdel(hash, ...dropped) : this.o.redis.multi())
        .hset(hash, ...fields)
        .pexpire(hash, ttl)
        .sadd(index, this.o.gatewayId)
        .pexpire(index, ttl)
        .exec(),
    );
  }

  private write(what: string, effect: () => Promise<unknown>): Promise<void> {
    return bestEffort(effect, {
      what,
      cost: "admin/listSubscription may miss or keep it a while",
      timeoutMs: REDIS_TIMEOUT_MS,
      logger: this.o.logger,
    });
  }

  /** Every gateway's live records of a group; gateways whose hash expired are dropped from the index. */
  async list(groupId: string): Promise<LiveRecord[]> {
    const { redis } = this.o;
    const gateways = await redis.smembers(this.keys.index);
    if (gateways.length === 0) return [];
    const pipe = redis.pipeline();
    for (const g of gateways) pipe.hgetall(redisKeys(this.o.prefix).stompSubscriptions(g));
    const replies = (await pipe.exec()) ?? [];
    const out: LiveRecord[] = [];
    const gone: string[] = [];
    gateways.forEach((g, i) => {
      const [err, hash] = replies[i] ?? [null, null];
      if (err) throw err;
      const fields = (hash ?? {}) as Record<string, string>;
      if (!(ALIVE_FIELD in fields)) gone.push(g);
      for (const [id, json] of Object.entries(fields)) {
        if (id === ALIVE_FIELD) continue;
        const r = parseRecord(json);
        if (r?.groupId === groupId) out.push(r);
      }
    });
    if (gone.length > 0) await redis.srem(this.keys.index, ...gone);
    return newestById(out);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearImmediate(this.soon);
    this.local.clear();
    const { index, hash } = this.keys;
    await this.write("drop this gateway's STOMP listing", () => this.o.redis.multi().del(hash).srem(index, this.o.gatewayId).exec());
  }
}

function parseRecord(json: string): LiveRecord | null {
  try {
    const r = LiveRecord.safeParse(JSON.parse(json));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/**
 * One record per subscription id, the newest, oldest first: a subscription resumed under its id
 * on a restarted gateway is listed once, though the killed process's copy lives until it expires.
 */
export function newestById(records: readonly LiveRecord[]): LiveRecord[] {
  const byId = new Map<string, LiveRecord>();
  for (const r of records) {
    const seen = byId.get(r.id);
    if (!seen || seen.createdAt < r.createdAt) byId.set(r.id, r);
  }
  return [...byId.values()].sort((a, b) => a.createdAt - b.createdAt);
}
