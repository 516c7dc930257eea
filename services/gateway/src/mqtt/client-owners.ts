import type { Redis } from "ioredis";
import { z } from "zod";
import { redisKeys } from "@evb/domain";
import type { MessageSubscriber } from "../events/receipt-waiter.ts";
import { bounded } from "./session-store.ts";

/** Gateway → gateway: end the connection `owner` holding `clientId` (ask), or: it has ended (ended). */
export const TakeoverMessage = z.discriminatedUnion("t", [
  z.object({ t: z.literal("ask"), id: z.string(), clientId: z.string(), owner: z.string(), from: z.string() }),
  z.object({ t: z.literal("ended"), id: z.string() }),
]);
export type TakeoverMessage = z.infer<typeof TakeoverMessage>;

/**
 * Who holds which MQTT client id across gateways, and the channel between gateways for a
 * take-over. An owner is `<gatewayId>/<token>\n<identity>` (ownerEntry): the token names one
 * connection, so a late ask never ends a newer connection that took the id on the same gateway
 * meanwhile; the identity is whose the id is (docs/security.md, "Sessions").
 */
export interface ClientOwners {
  /**
   * Makes `owner` the id's owner unless the id is held for another identity than `identity`
   * ("foreign": nothing changed); else the owner it replaced, or null. Throws when the store cannot answer.
   */
  swap(clientId: string, owner: string, identity: string): Promise<{ previous: string | null } | "foreign">;
  /** Gives the id up, only while `owner` still holds it. */
  release(clientId: string, owner: string): Promise<void>;
  /** Keeps these owners' entries alive (each only while it still holds its id). */
  refresh(held: ReadonlyArray<[clientId: string, owner: string]>): Promise<void>;
  /** Sends to one gateway; how many listeners took it (0: that gateway is gone). Throws when the store cannot answer. */
  send(gatewayId: string, m: TakeoverMessage): Promise<number>;
  /** Hears what other gateways send to `gatewayId`. */
  listen(gatewayId: string, onMessage: (m: TakeoverMessage) => void): Promise<void>;
  close(): Promise<void>;
}

/** How long an owner entry lives unrefreshed: a killed gateway's entries go by themselves. */
export const OWNER_TTL_MS = 10 * 60_000;

/** The owner entry of one connection (`<gatewayId>/<token>`) for `identity`. */
export function ownerEntry(connection: string, identity: string): string {
  return `${connection}\n${identity}`;
}

/** The identity an owner entry names; null for an entry without one (written before identities were kept). */
export function entryIdentity(entry: string): string | null {
  const nl = entry.indexOf("\n");
  return nl < 0 ? null : entry.slice(nl + 1);
}

/** The gateway an owner entry's connection is on. */
export function entryGateway(entry: string): string {
  const nl = entry.indexOf("\n");
  const connection = nl < 0 ? entry : entry.slice(0, nl);
  return connection.slice(0, connection.lastIndexOf("/"));
}

// Takes the id unless it is held for another identity (an entry without one is anybody's).
const SWAP = `local cur = redis.call('get', KEYS[1])
if cur then
  local at = string.find(cur, '\\n', 1, true)
  if at and string.sub(cur, at + 1) ~= ARGV[2] then return {0, cur} end
end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[3])
return {1, cur}`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;
const REFRESH = `for i, k in ipairs(KEYS) do if redis.call('get', k) == ARGV[i + 1] then redis.call('pexpire', k, ARGV[1]) end end return 0`;
/** Owner entries refreshed per script call. */
const REFRESH_CHUNK = 500;

/** ClientOwners on Redis: one key per client id (`mqttClientOwner`), one pub/sub channel per gateway (`mqttTakeoverChannel`). */
export class RedisClientOwners implements ClientOwners {
  private readonly redis: Redis;
  private readonly subscriber: MessageSubscriber;
  private readonly keys: ReturnType<typeof redisKeys>;
  private channel?: string;

  constructor(o: { redis: Redis; subscriber: MessageSubscriber; prefix: string }) {
    this.redis = o.redis;
    this.subscriber = o.subscriber;
    this.keys = redisKeys(o.prefix);
  }

  async swap(clientId: string, owner: string, identity: string): Promise<{ previous: string | null } | "foreign"> {
    const key = this.keys.mqttClientOwner(clientId);
    const r = (await bounded(this.redis.eval(SWAP, 1, key, owner, identity, OWNER_TTL_MS), "claim an MQTT client id")) as [
      number,
      string | null,
    ];
    return r[0] === 1 ? { previous: r[1] ?? null } : "foreign";
  }

  async release(clientId: string, owner: string): Promise<void> {
    await bounded(this.redis.eval(RELEASE, 1, this.keys.mqttClientOwner(clientId), owner), "release an MQTT client id");
  }

  async refresh(held: ReadonlyArray<[string, string]>): Promise<void> {
    for (let i = 0; i < held.length; i += REFRESH_CHUNK) {
      const part = held.slice(i, i + REFRESH_CHUNK);
      const keys = part.map(([id]) => this.keys.mqttClientOwner(id));
      await bounded(this.redis.eval(REFRESH, keys.length, ...keys, OWNER_TTL_MS, ...part.map(([, o]) => o)), "refresh MQTT client ids");
    }
  }

  send(gatewayId: string, m: TakeoverMessage): Promise<number> {
    return bounded(this.redis.publish(this.keys.mqttTakeoverChannel(gatewayId), JSON.stringify(m)), "ask for an MQTT take-over");
  }

  async listen(gatewayId: string, onMessage: (m: TakeoverMessage) => void): Promise<void> {
    const channel = this.keys.mqttTakeoverChannel(gatewayId);
    this.channel = channel;
    this.subscriber.on("message", (ch: string, raw: string) => {
      if (ch !== channel) return;
      const m = parse(raw);
      if (m) onMessage(m);
    });
    await this.subscriber.subscribe(channel);
  }

  async close(): Promise<void> {
    if (this.channel) await this.subscriber.unsubscribe(this.channel).catch(() => {});
  }
}

function parse(raw: string): TakeoverMessage | null {
  try {
    const r = TakeoverMessage.safeParse(JSON.parse(raw));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}
