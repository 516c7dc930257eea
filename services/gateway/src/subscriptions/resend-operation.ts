import { BrokerError, holdsNul, isBlank, matchesPattern } from "@evb/domain";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { storageFailure } from "../http/storage-failures.ts";
import { eventOfGroup } from "./event-target.ts";
import { type SubscriptionDeps, wake } from "./subscription-deps.ts";

/**
 * admin/resendEvent?subscriptionId=ID&eventId=E (an extension): sends one event again to one live
 * subscription. The request is stored (ResendStore) and the notifiers are woken; a delivery slice
 * sends it before the backlog, out of order and marked (`webhook-resend: true`, its own
 * `webhook-id`), through the same signing, address checks and attempt log as every callback, and
 * retries it until a 2xx or the retry budget is spent (at least once). Checks: subscription id
 * blank 100503, not live 100504; eventId as getEvent (100302, 100301), not in the subscription's
 * group 100303, not matched by its topic or pattern 100511.
 */
export function resendOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "admin/resendEvent",
    kind: "admin",
    variants: ["L", "M", "E"],
    // Sends an event again to someone's receiver.
    role: "admin",
    groupScope: "all",
    failureCode: storageFailure({}),
    async handle(ctx) {
      const raw = ctx.params.required("subscriptionId");
      const eventId = ctx.params.required("eventId");
      if (isBlank(raw)) throw BrokerError.of("SUBSCRIPTION_ID_BLANK");
      const id = raw.toLowerCase();
      const sub = holdsNul(id) ? null : await deps.store.get(id);
      if (!sub?.active) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
      const ev = await eventOfGroup(deps.events, sub.groupId, eventId);
      if (!matchesPattern(sub.topic, ev.topic, sub.matchRule)) throw BrokerError.of("EVENT_NOT_MATCHED");
      const resend = await deps.resends.request(sub.id, ev, deps.now());
      await wake(deps, [sub.id]);
      deps.logger.info({ subscriptionId: sub.id, eventId: ev.eventId, resend }, "event resend asked for");
      return data({ subscriptionId: sub.id, eventId: ev.eventId, resend });
    },
  };
}
