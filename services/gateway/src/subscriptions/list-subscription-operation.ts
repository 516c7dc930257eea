import { BrokerError, errorMessage, formatLocalTimestamp, holdsNul, isBlank, TIMED_OUT, type Variant, withTimeout } from "@evb/domain";
import type { SubscriptionRow } from "@evb/storage";
import { newestCounters, readStats, STATS_MIRROR_TIMEOUT_MS, type StatsCopy } from "@evb/subscriptions";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { genericCode } from "../http/params.ts";
import { LoopBudget } from "../http/loop-budget.ts";
import { data, type Reply } from "../http/replies.ts";
import type { LiveRecord } from "../stomp/live-subscriptions.ts";
import type { SubscriptionDeps } from "./subscription-deps.ts";

/**
 * admin/listSubscription in each variant's shape (behaviour.md 9.2):
 * L: `nodeInstances` (required; blank → 200001) → each node → array of 9-field records;
 * M: `nodeIp` or its alias `nodeInstances` (blank → -1) → each node → object keyed by id;
 * E: no parameter → every node that owns subscriptions (and this one) → object of 6-field records.
 * Counters come from Redis (copied there from Postgres by whoever changed them).
 *
 * The work is bounded and linear: at most MAX_LISTED_NODES distinct nodes are taken from the
 * parameter (more is refused with the generic code), the rows are grouped by node once, the
 * counter copies are read in one batch, and the records are built and serialized in slices of the
 * event loop (loop-budget.ts).
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
        nodes = splitNodes(raw, "nodeInstances", ctx.variant);
        return listing(deps, ctx.variant, group, nodes);
      }
      if (ctx.variant === "M") {
        const name = ctx.params.has("nodeIp") || !ctx.params.has("nodeInstances") ? "nodeIp" : "nodeInstances";
        const raw = ctx.params.required(name);
        const group = resolveGroup(ctx.params, deps.groups);
        if (isBlank(raw)) throw BrokerError.of("NODE_IP_LIST_NULL");
        nodes = splitNodes(raw, name, ctx.variant);
        return listing(deps, ctx.variant, group, nodes);
      }
      const group = resolveGroup(ctx.params, deps.groups);
      return listing(deps, ctx.variant, group, null);
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

/**
 * Most distinct nodes one listSubscription may name. A cluster has a handful of gateways; the cap
 * only bounds the work a single request can ask for (without it one request naming 140,000 nodes
 * held the event loop for seconds).
 */
const MAX_LISTED_NODES = 1000;

/** The distinct, trimmed, non-empty node names in `raw`, in first-seen order; more than MAX_LISTED_NODES refuses. */
function splitNodes(raw: string, param: string, variant: Variant): string[] {
  const nodes = new Set<string>();
  for (const part of raw.split(",")) {
    const node = part.trim();
    if (node === "") continue;
    nodes.add(node);
    if (nodes.size > MAX_LISTED_NODES) {
      throw new BrokerError(genericCode(variant), `more than ${MAX_LISTED_NODES} nodes in ${param}; ask for fewer`);
    }
  }
  return [...nodes];
}

/** Each node asked for (or, with none, this one and every owner of rows) with its records, in the variant's shape. */
async function recordsByNode(
  deps: SubscriptionDeps,
  variant: Variant,
  group: string,
  nodes: string[] | null,
  budget: LoopBudget,
): Promise<[string, Record<string, string>[]][]> {
  // Read beside the rows, so a hung Redis costs its bound once, not after the Postgres read.
  const stompRead = liveStomp(deps, group);
  // A node name holding U+0000 owns nothing (see holdsNul), so it is listed empty.
  const rows = await deps.store.listLive(group, nodes?.filter((n) => !holdsNul(n)) ?? null);
  const rowsByNode = new Map<string, SubscriptionRow[]>();
  for (const r of rows) {
    const mine = rowsByNode.get(r.nodeInstance);
    if (mine) mine.push(r);
    else rowsByNode.set(r.nodeInstance, [r]);
  }
  const stomp = await stompRead;
  const paused = await deps.settings.pausedOf(rows.map((r) => r.id));
  const owners = nodes ?? [...new Set([deps.selfAddress(), ...rowsByNode.keys(), ...stomp.keys()])];
  const stats = await readCopies(deps, rowsByNode);
  const out: [string, Record<string, string>[]][] = [];
  for (const node of owners) {
    const records: Record<string, string>[] = [];
    for (const r of rowsByNode.get(node) ?? []) {
      const listed = record(variant, r, stats.get(node)?.get(r.id));
      // Not the original's field, so only on a subscription its owner paused: the others' records keep their shape.
      records.push(paused.has(r.id) ? { ...listed, paused: "true" } : listed);
      await budget.maybePause();
    }
    for (const r of stomp.get(node) ?? []) {
      records.push(fields(variant, { ...r, interfaceType: r.interfaceType ?? "stomp", topic: r.topicName, pending: 0 }));
      await budget.maybePause();
    }
    out.push([node, records]);
  }
  return out;
}

/** The live STOMP subscriptions of the group by node (Redis; none when it fails: the callback rows still list). */
async function liveStomp(deps: SubscriptionDeps, group: string): Promise<Map<string, LiveRecord[]>> {
  const byNode = new Map<string, LiveRecord[]>();
  if (!deps.stomp) return byNode;
  try {
    const live = await withTimeout(deps.stomp.list(group), STATS_MIRROR_TIMEOUT_MS);
    if (live === TIMED_OUT) throw new Error("Redis did not answer in time");
    for (const r of live) {
      const mine = byNode.get(r.node);
      if (mine) mine.push(r);
      else byNode.set(r.node, [r]);
    }
  } catch (err) {
    deps.logger.warn({ err: errorMessage(err) }, "STOMP subscriptions could not be read; listing without them");
  }
  return byNode;
}

async function byNode(deps: SubscriptionDeps, variant: Variant, group: string, nodes: string[] | null): Promise<Record<string, unknown>> {
  const listed = await recordsByNode(deps, variant, group, nodes, new LoopBudget());
  // Keys come from the request: a null-prototype object keeps a node named "__proto__" as a key.
  const out: Record<string, unknown> = Object.create(null);
  for (const [node, records] of listed) {
    out[node] = variant === "L" ? records : Object.fromEntries(records.map((r) => [r.subscribeId, r]));
  }
  return out;
}

/**
 * The listing as JSON text, serialized record by record in slices of the event loop: one
 * JSON.stringify of a listing of many thousand subscriptions (0.5 MB per 1,500) held the loop in
 * one piece. The same text JSON.stringify of byNode's object would give.
 */
async function listing(deps: SubscriptionDeps, variant: Variant, group: string, nodes: string[] | null): Promise<Reply> {
  const budget = new LoopBudget();
  const listed = await recordsByNode(deps, variant, group, nodes, budget);
  const parts: string[] = [];
  for (const [node, records] of listed) {
    const items: string[] = [];
    for (const r of records) {
      items.push(variant === "L" ? JSON.stringify(r) : `${JSON.stringify(r.subscribeId)}:${JSON.stringify(r)}`);
      await budget.maybePause();
    }
    parts.push(`${JSON.stringify(node)}:${variant === "L" ? `[${items.join(",")}]` : `{${items.join(",")}}`}`);
  }
  return { kind: "json", json: `{${parts.join(",")}}` };
}

/**
 * The Redis copies of the counters of every node that owns rows, read in one batch (one HMGET per
 * such node, sent together), or none when Redis fails or does not answer in time: the rows just
 * read from Postgres carry the counters too (the truth the copies are made from), so the answer
 * stays exact, only served without the cache.
 */
async function readCopies(
  deps: SubscriptionDeps,
  rowsByNode: Map<string, SubscriptionRow[]>,
): Promise<Map<string, Map<string, StatsCopy>>> {
  const nodes = [...rowsByNode.keys()];
  const batch = Promise.all(
    nodes.map((node) =>
      readStats(
        deps.redis,
        deps.redisPrefix,
        node,
        (rowsByNode.get(node) ?? []).map((r) => r.id),
      ),
    ),
  );
  try {
    const r = await withTimeout(batch, STATS_MIRROR_TIMEOUT_MS);
    if (r !== TIMED_OUT) return new Map(nodes.map((node, i) => [node, r[i] ?? new Map()]));
    deps.logger.warn(
      { nodes: nodes.length, timeoutMs: STATS_MIRROR_TIMEOUT_MS },
      "Redis did not answer in time; listing counters from Postgres",
    );
  } catch (err) {
    deps.logger.warn({ nodes: nodes.length, err: errorMessage(err) }, "Redis read failed; listing counters from Postgres");
  }
  return new Map();
}

/** A callback subscription's record, with its newest counters. */
function record(variant: Variant, row: SubscriptionRow, stats: StatsCopy | undefined): Record<string, string> {
  const counters = newestCounters(row, stats);
  return fields(variant, { ...row, delivered: counters.delivered, pending: counters.pending, notifiedAt: counters.notifiedAt });
}

/** What a Subscription record shows, of a callback row or a live STOMP subscription. */
interface Listed {
  interfaceType: string;
  id: string;
  groupId: string;
  topic: string;
  remoteIp: string;
  createdAt: number;
  delivered: number;
  pending: number;
  notifiedAt: number | null;
}

/** A Subscription record, all strings, in the original's key order; E has the first six fields. */
function fields(variant: Variant, s: Listed): Record<string, string> {
  const base = {
    interfaceType: s.interfaceType,
    notifiedEventCount: String(s.delivered),
    notifyingEventCount: String(s.pending),
    notifyTimeStamp: formatLocalTimestamp(s.notifiedAt ?? s.createdAt),
    topicName: s.topic,
    subscribeId: s.id,
  };
  if (variant === "E") return base;
  return { ...base, remoteIp: s.remoteIp, createTimeStamp: formatLocalTimestamp(s.createdAt), groupId: s.groupId };
}
