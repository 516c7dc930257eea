import { BrokerError, isBlank } from "@evb/domain";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { type SubscriptionDeps, unpublishStats } from "./subscription-deps.ts";

/**
 * unSubscribe (M and E), behaviour.md 8.5: absent id → missing parameter; blank → 100503; not a
 * live subscription (no format check) → 100504; else `true` and callbacks stop. The delivery
 * cursor is kept, so subscribing again with this id resumes after the last delivered event.
 */
export function unsubscribeOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "rest/unSubscribe",
    kind: "rest",
    variants: ["M", "E"],
    async handle(ctx) {
      const raw = ctx.params.required("subscriptionId");
      if (isBlank(raw)) throw BrokerError.of("SUBSCRIPTION_ID_BLANK");
      // An exact lookup (no trimming): a padded id names no subscription (100504).
      const row = raw.includes("\u0000") ? null : await deps.store.unsubscribe(raw.toLowerCase());
      if (!row) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
      await unpublishStats(deps, row);
      deps.logger.info({ subscriptionId: row.id }, "subscription ended");
      return data(true);
    },
  };
}
