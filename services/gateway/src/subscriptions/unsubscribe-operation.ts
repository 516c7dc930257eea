import { BrokerError, holdsNul, isBlank } from "@evb/domain";
import { ownerId } from "../http/caller-address.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { type SubscriptionDeps, unpublishStats } from "./subscription-deps.ts";

/**
 * unSubscribe (M and E), behaviour.md 8.5: absent id → missing parameter; blank → 100503; not a
 * live subscription (no format check) → 100504; else `true` and callbacks stop. The delivery
 * cursor is kept, so subscribing again with this id resumes after the last delivered event.
 * Ownership (behaviour.md 10.4): with API keys on, a subscription of another key answers 100504
 * as if it did not exist; without keys the original's answer stands (anyone may end any id, as
 * listSubscription shows them all), but who ended it is recorded on the row and logged.
 */
export function unsubscribeOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "rest/unSubscribe",
    kind: "rest",
    variants: ["M", "E"],
    role: "subscribe",
    // No group (behaviour.md 8.5): with keys on, a key ends only the subscriptions it owns
    // (SubscriptionStore.unsubscribe), which it made in a group it covers.
    groupScope: "groupless",
    async handle(ctx) {
      const raw = ctx.params.required("subscriptionId");
      if (isBlank(raw)) throw BrokerError.of("SUBSCRIPTION_ID_BLANK");
      // An exact lookup (no trimming): a padded id names no subscription (100504).
      const by = ownerId(ctx.caller);
      const row = holdsNul(raw)
        ? null
        : await deps.store.unsubscribe(raw.toLowerCase(), { caller: by, ownerOnly: ctx.caller.keyId !== null, now: deps.now() });
      if (!row) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
      // A rebuilt ledger must not bring an ended subscription back to life.
      await deps.recordSubscription(row.id);
      await unpublishStats(deps, row);
      if (row.owner === by) deps.logger.info({ subscriptionId: row.id }, "subscription ended");
      else deps.logger.warn({ subscriptionId: row.id, owner: row.owner, by }, "subscription ended by a caller other than its owner");
      return data(true);
    },
  };
}
