import type { SubscriptionCounters } from "@evb/storage";
import { TRANSITIONS, type Transition } from "../../packages/storage/src/subscription-transitions.ts";

/**
 * The counters after `t` (`n`: the events it concerns, as Postgres counted them; `now`: its
 * time): what the statements do to them, as the tests' model of the lifecycle table. Only the
 * tests read it (the unit test holds it to the table, the integration test holds Postgres to
 * it), so it lives here and not in the storage package.
 */
export function countersAfter(t: Transition, before: SubscriptionCounters, by: { n?: number; now?: number } = {}): SubscriptionCounters {
  const e = TRANSITIONS[t].counters;
  const n = by.n ?? 0;
  const delivered = e.delivered === "zero" ? 0 : e.delivered === "add" ? before.delivered + n : before.delivered;
  const pending =
    e.pending === "zero"
      ? 0
      : e.pending === "add"
        ? before.pending + n
        : e.pending === "subtract"
          ? Math.max(before.pending - n, 0)
          : before.pending;
  const notifiedAt = e.notifiedAt === "clear" ? null : e.notifiedAt === "now" ? (by.now ?? null) : before.notifiedAt;
  return { delivered, pending, notifiedAt, rev: e.rev === "bump" ? before.rev + 1 : before.rev };
}
