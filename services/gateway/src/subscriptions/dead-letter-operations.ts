import { formatLocalTimestamp, holdsNul, isBlank } from "@evb/domain";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { replayFromPosition } from "./replay-from-position.ts";
import { shownCallbackUrl } from "./shown-callback-url.ts";
import { type SubscriptionDeps, wake } from "./subscription-deps.ts";

/**
 * Extensions (not in the reference interface), in every variant's admin shape:
 * - admin/deadLetters[?groupId=G]: subscriptions whose head event used up its retry budget. Their
 *   delivery is suspended with the backlog kept in order; each entry names the head event, the
 *   attempts, the last error and how many events wait behind it.
 * - admin/replayDeadLetters[?subscriptionId=ID]: releases one (or every) dead-lettered
 *   subscription: the head event gets a fresh retry budget and the backlog drains in order.
 *   Answers the ids released. With `fromTime` or `fromEventId` it replays one live subscription
 *   from that position instead (replay-from-position.ts).
 */
export function deadLetterOperations(deps: SubscriptionDeps): Operation[] {
  return [
    {
      path: "admin/deadLetters",
      kind: "admin",
      variants: ["L", "M", "E"],
      groupScope: "all-unless-named",
      async handle(ctx) {
        const group = resolveGroup(ctx.params, deps.groups);
        const rows = await deps.store.deadLettered(group);
        const out = [];
        for (const r of rows) {
          const head = (await deps.deliveries.backlog(r.id, 1))[0];
          out.push({
            subscriptionId: r.id,
            topicName: r.topic,
            groupId: r.groupId,
            url: shownCallbackUrl(r.url, r.owner, ctx.caller),
            nodeInstance: r.nodeInstance,
            eventId: head?.eventId ?? null,
            attempts: r.attempts,
            lastError: r.lastError,
            deadTimeStamp: formatLocalTimestamp(r.deadAt ?? 0),
            notifyingEventCount: String(r.pending),
          });
        }
        return data(out);
      },
    },
    {
      path: "admin/replayDeadLetters",
      kind: "admin",
      variants: ["L", "M", "E"],
      role: "admin",
      groupScope: "all",
      async handle(ctx) {
        const raw = ctx.params.optional("subscriptionId");
        const id = raw === undefined || isBlank(raw) ? null : raw.toLowerCase();
        const rewound = await replayFromPosition(deps, ctx.params, id);
        if (rewound) return data(rewound);
        // No id holds U+0000: nothing to replay.
        const released = id !== null && holdsNul(id) ? [] : await deps.store.replay(id);
        await wake(deps, released);
        if (released.length > 0) deps.logger.info({ subscriptions: released }, "dead letters replayed");
        return data(released);
      },
    },
  ];
}
