import type { Redis } from "ioredis";
import { z } from "zod";
import { redisKeys } from "@evb/domain";
import { chainNodeId } from "./chain-node-id.ts";
import type { RegistryTimings } from "./registry-env.ts";

/** A broker instance (gateway or notifier), as `admin/listNodes` and listSubscription name it. */
export interface BrokerNode {
  /** `ip:port`. */
  address: string;
  role: string;
  /** Heartbeat fresher than the node's stale limit. */
  active: boolean;
  lastSeenMs: number;
}

/** What an indexer reports about itself in one group. */
export interface ChainNodeBeat {
  sealerIndex: number;
  /** `ip:port` the node can be reached at (its health endpoint). */
  address: string;
  /** The group's chain height as the node last saw it; null when unknown. */
  blockNumber: number | null;
  /**
   * Whether the node can seal the group now (its log matched, the last seal not failed, Kafka and
   * the ledger reachable), and why not. Absent in a record of an older indexer: taken as able.
   */
  canSeal?: boolean;
  reason?: string;
  /** The identity of the ledger the node matched and seals into (while it can seal). */
  ledger?: string;
  /** The identity of a ledger the node refused as another deployment's. */
  foreignLedger?: string;
}

/** An indexer as `node/nodeList`, `group/general` and `blockchaininfo` report it. */
export interface ChainNode extends ChainNodeBeat {
  nodeId: string;
  active: boolean;
  lastSeenMs: number;
}

const BrokerRecord = z.object({ address: z.string(), role: z.string(), lastSeenMs: z.number() });
const ChainRecord = z.object({
  sealerIndex: z.number().int(),
  address: z.string(),
  blockNumber: z.number().int().nullable(),
  canSeal: z.boolean().optional(),
  reason: z.string().optional(),
  ledger: z.string().optional(),
  foreignLedger: z.string().optional(),
  lastSeenMs: z.number(),
});

/**
 * The node registry in Redis. Each node keeps two keys alive with its heartbeat: a record that
 * expires after `goneMs` (the node is listed while it exists) and a marker that expires after
 * `staleMs` (the node is active while it exists). Expiry runs on Redis's clock, so writers and
 * readers on different machines need no synchronised clocks. An index set per kind lets readers
 * find the records without SCAN; readers drop index entries whose record has expired.
 *
 * How it can mislead: a node that comes back in the instant a reader prunes its expired entry
 * is missing from listings until its next heartbeat re-adds it.
 */
export class NodeRegistry {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(opts: { redis: Redis; prefix: string }) {
    this.redis = opts.redis;
    this.prefix = redisKeys(opts.prefix).registry;
  }

  private brokerKeys(address: string) {
    return {
      index: `${this.prefix}:broker:index`,
      record: `${this.prefix}:broker:node:${address}`,
      alive: `${this.prefix}:broker:alive:${address}`,
    };
  }

  private chainKeys(groupId: string, sealerIndex: number | string) {
    return {
      index: `${this.prefix}:chain:${groupId}:index`,
      record: `${this.prefix}:chain:${groupId}:node:${sealerIndex}`,
      alive: `${this.prefix}:chain:${groupId}:alive:${sealerIndex}`,
    };
  }

  async beatBrokerNode(node: { address: string; role: string }, timings: RegistryTimings): Promise<void> {
    const k = this.brokerKeys(node.address);
    await this.write(k, node.address, JSON.stringify({ address: node.address, role: node.role, lastSeenMs: Date.now() }), timings);
  }

  async beatChainNode(groupId: string, node: ChainNodeBeat, timings: RegistryTimings): Promise<void> {
    const k = this.chainKeys(groupId, node.sealerIndex);
    const record = {
      sealerIndex: node.sealerIndex,
      address: node.address,
      blockNumber: node.blockNumber,
      ...(node.canSeal === undefined ? {} : { canSeal: node.canSeal }),
      ...(node.reason === undefined ? {} : { reason: node.reason }),
      ...(node.ledger === undefined ? {} : { ledger: node.ledger }),
      ...(node.foreignLedger === undefined ? {} : { foreignLedger: node.foreignLedger }),
      lastSeenMs: Date.now(),
    };
    await this.write(k, String(node.sealerIndex), JSON.stringify(record), timings);
  }

  /** A clean stop: the node shows as inactive at once, and is forgotten when its record expires. */
  async brokerNodeStopped(address: string): Promise<void> {
    await this.redis.del(this.brokerKeys(address).alive);
  }

  async chainNodeStopped(groupId: string, sealerIndex: number): Promise<void> {
    await this.redis.del(this.chainKeys(groupId, sealerIndex).alive);
  }

  /** Broker nodes not yet forgotten, by address. */
  async brokerNodes(): Promise<BrokerNode[]> {
    const found = await this.read(this.brokerKeys("").index, (m) => this.brokerKeys(m));
    const out: BrokerNode[] = [];
    for (const f of found) {
      const r = BrokerRecord.safeParse(f.record);
      if (r.success) out.push({ ...r.data, active: f.active });
    }
    return out.sort((a, b) => a.address.localeCompare(b.address));
  }

  /** Chain nodes of a group not yet forgotten, by sealer index. */
  async chainNodes(groupId: string): Promise<ChainNode[]> {
    const found = await this.read(this.chainKeys(groupId, "").index, (m) => this.chainKeys(groupId, m));
    const out: ChainNode[] = [];
    for (const f of found) {
      const r = ChainRecord.safeParse(f.record);
      if (r.success) out.push({ ...r.data, nodeId: chainNodeId(r.data.sealerIndex), active: f.active });
    }
    return out.sort((a, b) => a.sealerIndex - b.sealerIndex);
  }

  private async write(k: { index: string; record: string; alive: string }, member: string, record: string, t: RegistryTimings) {
    await this.redis
      .multi()
      .sadd(k.index, member)
      .pexpire(k.index, t.goneMs)
      .set(k.record, record, "PX", t.goneMs)
      .set(k.alive, "1", "PX", t.staleMs)
      .exec();
  }

  private async read(
    index: string,
    keysOf: (member: string) => { record: string; alive: string },
  ): Promise<{ record: unknown; active: boolean }[]> {
    const members = await this.redis.smembers(index);
    if (members.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const m of members) {
      const k = keysOf(m);
      pipe.get(k.record);
      pipe.exists(k.alive);
    }
    const replies = (await pipe.exec()) ?? [];
    const out: { record: unknown; active: boolean }[] = [];
    const gone: string[] = [];
    members.forEach((m, i) => {
      const [recErr, rec] = replies[2 * i] ?? [null, null];
      const [, alive] = replies[2 * i + 1] ?? [null, 0];
      if (recErr) throw recErr;
      if (typeof rec !== "string") {
        gone.push(m);
        return;
      }
      try {
        out.push({ record: JSON.parse(rec), active: alive === 1 });
      } catch {
        gone.push(m);
      }
    });
    if (gone.length > 0) await this.redis.srem(index, ...gone);
    return out;
  }
}
