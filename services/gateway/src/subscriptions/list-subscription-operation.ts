import { BrokerError, formatLocalTimestamp, isBlank, type Variant, TIMED_OUT, withTimeout } from "@evb/domain";
import type { SubscriptionRow } from "@evb/storage";
import { readStats, STATS_MIRROR_TIMEOUT_MS, type StatsCopy } from "@evb/subscriptions";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import type { SubscriptionDeps } from "./subscription-deps.ts";

/**
 * admin/listSubscription in each variant's shape (behaviour.md 9.2):
 * L: `nodeInstances` (required; blank → 200001) → each node → array of 9-field records;
 * M: `nodeIp` or its alias `nodeInstances` (blank → -1) → each node → object keyed by id;
 * E: no parameter → every node that owns subscriptions (and this one) → object of 6-field records.
 * Counters come from Redis (copied there from Postgres by whoever changed them).
 */
export function listSubscriptionOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "admin/listSubscription",
    kind: "admin",
    variants: ["L", "M", "E"],
    async handle(ctx) {
      let nodes: string[] | null = null;
      if (ctx.variant === "L") {
        const raw = ctx.params.required("nodeInstances");
        const group = resolveGroup(ctx.params, deps.groups);
        if (isBlank(raw)) throw BrokerError.of("INVALID_INPUT_PARAM");
        nodes = splitNodes(raw);
        return data(await byNode(deps, ctx.variant, group, nodes));
      }
      if (ctx.variant === "M") {
        const raw =
          ctx.params.has("nodeIp") || !ctx.params.has("nodeInstances")
            ? ctx.params.required("nodeIp")
            : ctx.params.required("nodeInstances");
        const group = resolveGroup(ctx.params, deps.groups);
        if (isBlank(raw)) throw BrokerError.of("NODE_IP_LIST_NULL");
        nodes = splitNodes(raw);
        return data(await byNode(deps, ctx.variant, group, nodes));
      }
      const group = resolveGroup(ctx.params, deps.groups);
      return data(await byNode(deps, ctx.variant, group, null));
    },
  };
}

/**
 * admin/innerListSubscription (behaviour.md 9.1, 9.2): this node's own map of subscription id →
 * record, which one node asks of another. Bare in M and E (M, as the original's early form,
 * requires `groupId`), enveloped in L — the envelope rules of a REST operation.
 */
export function innerListSubscriptionOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "admin/innerListSubscription",
    kind: "rest",
    variants: ["L", "M", "E"],
    async handle(ctx) {
      if (ctx.variant === "M") ctx.params.required("groupId");
      const group = resolveGroup(ctx.params, deps.groups);
      const self = deps.selfAddress();
      const mine = (await byNode(deps, ctx.variant, group, [self]))[self];
      return data(ctx.variant === "L" ? Object.fromEntries((mine as { subscribeId: string }[]).map((r) => [r.subscribeId, r])) : mine);
    },
  };
}

function splitNodes(raw: string): string[] {
  return [
    ...new Set(
      raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
}

async function byNode(deps: SubscriptionDeps, variant: Variant, group: string, nodes: string[] | null): Promise<Record<string, unknown>> {
  // Postgres text cannot hold U+0000; such a node owns nothing, so it is listed empty.
  const rows = await deps.store.listLive(group, nodes?.filter((n) => !n.includes("\u0000")) ?? null);
  const owners = nodes ?? [...new Set([deps.selfAddress(), ...rows.map((r) => r.nodeInstance)])];
  const out: Record<string, unknown> = {};
  for (const node of owners) {
    const mine = rows.filter((r) => r.nodeInstance === node);
    const stats = await readCopies(
      deps,
      node,
      mine.map((r) => r.id),
    );
    const records = mine.map((r) => record(variant, r, stats.get(r.id)));
    out[node] = variant === "L" ? records : Object.fromEntries(records.map((r) => [r.subscribeId, r]));
  }
  return out;
}

/**
 * The Redis copies of the counters, or none when Redis fails or does not answer in time: the rows
 * just read from Postgres carry the counters too (the truth the copies are made from), so the
 * answer stays exact, only served without the cache.
 */
async function readCopies(deps: SubscriptionDeps, node: string, ids: string[]): Promise<Map<string, StatsCopy>> {
  try {
    const r = await withTimeout(readStats(deps.redis, deps.redisPrefix, node, ids), STATS_MIRROR_TIMEOUT_MS);
    if (r !== TIMED_OUT) return r;
    deps.logger.warn({ node, timeoutMs: STATS_MIRROR_TIMEOUT_MS }, "Redis did not answer in time; listing counters from Postgres");
  } catch (err) {
    deps.logger.warn({ node, err: (err as Error).message }, "Redis read failed; listing counters from Postgres");
  }
  return new Map();
}

/** A Subscription record, all strings, in the original's key order; E has the first six fields. */
function record(variant: Variant, row: SubscriptionRow, stats: StatsCopy | undefined): Record<string, string> {
  // The Redis copy unless the row read just now is newer (a copy lost to a crash or a Redis blip).
  const fresh = stats && stats.rev >= row.statsRev ? stats : undefined;
  const notified = fresh?.notified ?? row.deliveredCount;
  const notifying = fresh?.notifying ?? row.pendingCount;
  const notifyTs = (fresh ? fresh.notifyTs : row.notifiedAt) ?? row.createdAt;
  const base = {
    interfaceType: row.interfaceType,
    notifiedEventCount: String(notified),
    notifyingEventCount: String(notifying),
    notifyTimeStamp: formatLocalTimestamp(notifyTs),
    topicName: row.topic,
    subscribeId: row.id,
  };
  if (variant === "E") return base;
  return { ...base, remoteIp: row.remoteIp, createTimeStamp: formatLocalTimestamp(row.createdAt), groupId: row.groupId };
}
