import type pg from "pg";
import { isDefaultSettings, MAX_RECORDED_ENDINGS, type SubscriptionRecord, type SubscriptionState } from "@evb/domain";
import { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
import { inTransaction } from "./pool.ts";
import { write } from "./subscription-lifecycle.ts";
import { SubscriptionSettingsStore } from "./subscription-settings-store.ts";
import { restoredStart } from "./subscription-start.ts";
import { lockDispatchCursor } from "./subscription-store.ts";

/** Subscriptions restored per transaction: the group's dispatch lock is held for one chunk at a time. */
const RESTORE_CHUNK = 200;

/** Where one subscription's delivery stands, for a checkpoint. */
export interface DeliveredCursor {
  id: string;
  groupId: string;
  delivered: LedgerPosition;
  deliveredCount: number;
}

/**
 * Subscriptions as Kafka keeps them (docs/ledger.md, "Subscriptions"): the record of a row that
 * subscribe or unSubscribe just wrote, the delivery cursors that the checkpoints carry, and the
 * restore of the rows a rebuilt ledger lacks.
 */
export class SubscriptionRecords {
  private readonly pool: pg.Pool;
  constructor(pool: pg.Pool) {
    this.pool = pool;
  }

  /** The subscription's record as its row stands now (with its newest endings); null when there is no row. */
  async recordOf(id: string): Promise<SubscriptionRecord | null> {
    const r = await this.pool.query<Omit<SubscriptionRecord, "v" | "kind" | "delivered"> & { h: number; i: number }>(
      `SELECT s.group_id AS "groupId", s.id, s.topic, s.match_rule AS "matchRule", s.body_variant AS "bodyVariant", s.url,
         s.node_instance AS "nodeInstance", s.remote_ip AS "remoteIp", s.interface_type AS "interfaceType", s.owner,
         s.created_at AS "createdAtMs", s.active, s.delivered_height AS h, s.delivered_idx AS i, s.delivered_count AS "deliveredCount",
         s.unsubscribed_by AS "unsubscribedBy", s.unsubscribed_at AS "unsubscribedAtMs",
         (SELECT COALESCE(json_agg(json_build_object('owner', e.owner, 'endedBy', e.ended_by, 'endedAtMs', e.ended_at)
            ORDER BY e.ended_at), '[]')
          FROM (SELECT * FROM subscription_endings WHERE subscription_id = s.id ORDER BY ended_at DESC LIMIT $2) e) AS endings
       FROM subscriptions s WHERE s.id = $1`,
      [id, MAX_RECORDED_ENDINGS],
    );
    const row = r.rows[0];
    if (!row) return null;
    const { h, i, ...rest } = row;
    // The secrets as stored: sealed with SECRETS_KEY when it is set, so the record keeps them so too.
    const settings = await new SubscriptionSettingsStore(this.pool).stored(id);
    const record: SubscriptionRecord = { v: 1, kind: "subscription", ...rest, delivered: { height: h, idx: i } };
    // Only a subscription configured by its owner carries settings: the others' records stay as they were.
    return isDefaultSettings(settings) ? record : { ...record, settings };
  }

  /**
   * Delivery cursors of the subscriptions that delivered something since `sinceMs` (epoch ms, the
   * notifiers' clocks: ask with a margin), for the checkpoints.
   */
  async deliveredSince(sinceMs: number): Promise<DeliveredCursor[]> {
    const r = await this.pool.query<{ id: string; groupId: string; h: number; i: number; n: number }>(
      `SELECT id, group_id AS "groupId", delivered_height AS h, delivered_idx AS i, delivered_count AS n
       FROM subscriptions WHERE notified_at >= $1`,
      [sinceMs],
    );
    return r.rows.map((x) => ({ id: x.id, groupId: x.groupId, delivered: { height: x.h, idx: x.i }, deliveredCount: x.n }));
  }

  /**
   * Puts back the subscriptions of `groupId` that the ledger lacks, as their records say, each
   * delivered up to its furthest checkpoint (never past the ledger's head: what a lost ledger
   * delivered beyond its chain records is not in this one). The ids already present are left
   * alone. Returns how many were restored.
   */
  async restore(groupId: string, states: readonly SubscriptionState[]): Promise<number> {
    let restored = 0;
    for (let at = 0; at < states.length; at += RESTORE_CHUNK) {
      const chunk = states.slice(at, at + RESTORE_CHUNK);
      restored += await inTransaction(this.pool, async (c) => {
        const dispatched = await lockDispatchCursor(c, groupId);
        const head = Number(
          (await c.query<{ h: string }>("SELECT COALESCE((SELECT height FROM chain_heads WHERE group_id = $1), 0) AS h", [groupId])).rows[0]
            ?.h ?? 0,
        );
        const present = new Set(
          (await c.query<{ id: string }>("SELECT id FROM subscriptions WHERE id = ANY($1)", [chunk.map((s) => s.record.id)])).rows.map(
            (r) => r.id,
          ),
        );
        let n = 0;
        for (const s of chunk) if (!present.has(s.record.id) && (await restoreOne(c, s, dispatched, head))) n++;
        return n;
      });
    }
    return restored;
  }
}

/** One row and its endings; false when the id had a row after all. */
async function restoreOne(c: pg.PoolClient, s: SubscriptionState, dispatched: LedgerPosition, head: number): Promise<boolean> {
  const r = s.record;
  const cursor = s.delivered.height > head ? { height: head, idx: END_OF_BLOCK } : s.delivered;
  const start = restoredStart(dispatched, cursor);
  const row = await write.restored(c, {
    id: r.id,
    groupId: r.groupId,
    topic: r.topic,
    matchRule: r.matchRule,
    bodyVariant: r.bodyVariant,
    url: r.url,
    nodeInstance: r.nodeInstance,
    remoteIp: r.remoteIp,
    interfaceType: r.interfaceType,
    owner: r.owner,
    createdAt: r.createdAtMs,
    active: r.active,
    startHeight: start.startHeight,
    delivered: start.delivered,
    deliveredCount: s.deliveredCount,
    unsubscribedBy: r.unsubscribedBy,
    unsubscribedAt: r.unsubscribedAtMs,
    catchUpTo: r.active ? start.catchUpTo : null,
  });
  if (!row) return false;
  if (r.settings) await SubscriptionSettingsStore.restore(c, r.id, r.settings, r.createdAtMs);
  if (r.endings.length > 0) {
    await c.query(
      `INSERT INTO subscription_endings (subscription_id, owner, ended_by, ended_at)
       SELECT $1, o, b, t FROM unnest($2::text[], $3::text[], $4::bigint[]) AS u(o, b, t)`,
      [r.id, r.endings.map((e) => e.owner), r.endings.map((e) => e.endedBy), r.endings.map((e) => e.endedAtMs)],
    );
  }
  return true;
}
