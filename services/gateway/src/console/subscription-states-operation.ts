import { formatLocalTimestamp, TIMED_OUT, withTimeout } from "@evb/domain";
import type { SubscriptionRow, SubscriptionStore } from "@evb/storage";
import { STATS_MIRROR_TIMEOUT_MS } from "@evb/subscriptions";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import type { LiveSubscriptionSource } from "../stomp/live-subscriptions.ts";
import { shownCallbackUrl } from "../subscriptions/shown-callback-url.ts";
import { subscriptionState } from "./subscription-state.ts";

export interface SubscriptionStatesDeps {
  store: Pick<SubscriptionStore, "listLive">;
  /** Which of these subscriptions are paused (their settings, `admin/subscriptionSettings`). */
  paused: (ids: readonly string[]) => Promise<ReadonlySet<string>>;
  /** The alert URLs of those of these subscriptions that have one (their settings, `admin/subscriptionSettings`). */
  alertUrls: (ids: readonly string[]) => Promise<ReadonlyMap<string, string>>;
  /** Live STOMP and MQTT subscriptions (Redis); they have no delivery state of their own. */
  stomp?: LiveSubscriptionSource;
  groups: ReadonlySet<string>;
}

/** An epoch-ms time as the admin operations write it, or null. */
const stamp = (ms: number | null) => (ms === null ? null : formatLocalTimestamp(ms));

/** One callback subscription with its delivery state, read from its row (Postgres: the truth, not the Redis copy). */
function callbackRecord(row: SubscriptionRow, paused: boolean, alertUrl: string | null, caller: Parameters<typeof shownCallbackUrl>[2]) {
  const s = subscriptionState({ ...row, paused });
  return {
    subscriptionId: row.id,
    topicName: row.topic,
    interfaceType: row.interfaceType,
    url: shownCallbackUrl(row.url, row.owner, caller),
    // Redacted as the callback URL is: it may carry a token just the same.
    alertUrl: alertUrl === null ? null : shownCallbackUrl(alertUrl, row.owner, caller),
    nodeInstance: row.nodeInstance,
    state: s.state,
    catchingUp: row.catchingUp,
    delivered: row.delivered,
    pending: row.pending,
    attempts: row.attempts,
    lastError: s.lastError,
    createdAt: row.createdAt,
    createTimeStamp: formatLocalTimestamp(row.createdAt),
    // Null before the first delivery: never the creation time (listSubscription's notifyTimeStamp falls back to it).
    lastDeliveredAt: row.notifiedAt,
    lastDeliveredTimeStamp: stamp(row.notifiedAt),
    nextAttemptAt: s.nextAttemptAt,
    nextAttemptTimeStamp: stamp(s.nextAttemptAt),
    failingSince: s.failingSince,
    failingSinceTimeStamp: stamp(s.failingSince),
    deadAt: row.deadAt,
  };
}

/**
 * admin/subscriptionStates[?groupId=G] (an extension the console reads): every live subscription
 * of the group, callbacks with where their delivery stands (subscription-state.ts) and their
 * counters from the row, then live STOMP/MQTT subscriptions as `live`. Callback and alert URLs are
 * shown as admin/deadLetters shows callback URLs (shown-callback-url.ts). One read of the group's rows, oldest first.
 */
export function subscriptionStatesOperation(deps: SubscriptionStatesDeps): Operation {
  return {
    path: "admin/subscriptionStates",
    kind: "admin",
    variants: ["L", "M", "E"],
    async handle(ctx) {
      const group = resolveGroup(ctx.params, deps.groups);
      const [rows, live] = await Promise.all([deps.store.listLive(group, null), liveOf(deps, group)]);
      const ids = rows.map((r) => r.id);
      const [paused, alertUrls] = await Promise.all([deps.paused(ids), deps.alertUrls(ids)]);
      const callbacks = rows.map((r) => callbackRecord(r, paused.has(r.id), alertUrls.get(r.id) ?? null, ctx.caller));
      const others = live.map((r) => ({
        subscriptionId: r.id,
        topicName: r.topicName,
        interfaceType: r.interfaceType ?? "stomp",
        nodeInstance: r.node,
        state: "live",
        delivered: r.delivered,
        createdAt: r.createdAt,
        createTimeStamp: formatLocalTimestamp(r.createdAt),
        lastDeliveredAt: r.notifiedAt,
        lastDeliveredTimeStamp: stamp(r.notifiedAt),
      }));
      return data([...callbacks, ...others]);
    },
  };
}

/** The group's live STOMP/MQTT subscriptions, or none when Redis fails or is slow (the callbacks still list). */
async function liveOf(deps: SubscriptionStatesDeps, group: string) {
  if (!deps.stomp) return [];
  const live = await withTimeout(
    deps.stomp.list(group).catch(() => []),
    STATS_MIRROR_TIMEOUT_MS,
  );
  return live === TIMED_OUT ? [] : live;
}
