import { BrokerError, holdsNul } from "@evb/domain";
import { parseTime } from "../events/event-search.ts";
import { nonBlank, type Params } from "../http/params.ts";
import { eventOfGroup } from "./event-target.ts";
import { publishStats, type SubscriptionDeps, wake } from "./subscription-deps.ts";

/**
 * admin/replayDeadLetters's replay from a position: with `fromTime` or `fromEventId` (one, and a
 * subscriptionId: 100512 otherwise) the live subscription's delivery goes back to that event
 * (SubscriptionStore.rewind: never forward, backlog refilled from there, dead letter released).
 * Undefined when neither parameter is given (the plain dead-letter release). Answers the id.
 */
export async function replayFromPosition(deps: SubscriptionDeps, params: Params, id: string | null): Promise<string[] | undefined> {
  const fromTime = nonBlank(params, "fromTime");
  const fromEventId = nonBlank(params, "fromEventId");
  if (fromTime === undefined && fromEventId === undefined) return undefined;
  if (id === null || (fromTime !== undefined && fromEventId !== undefined)) throw BrokerError.of("REPLAY_POSITION_INVALID");
  const sub = holdsNul(id) ? null : await deps.store.get(id);
  if (!sub?.active) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
  const from =
    fromEventId !== undefined ? { event: await eventOfGroup(deps.events, sub.groupId, fromEventId) } : { timeMs: parseTime(fromTime) ?? 0 };
  const row = await deps.store.rewind(sub.id, from);
  if (!row) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
  await publishStats(deps, row);
  await wake(deps, [row.id]);
  deps.logger.info({ subscriptionId: row.id, fromTime, fromEventId }, "subscription replayed from a position");
  return [row.id];
}
