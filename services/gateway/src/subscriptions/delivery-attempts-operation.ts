import { BrokerError, formatLocalTimestamp, holdsNul, isBlank } from "@evb/domain";
import type { DeliveryAttempt } from "@evb/storage";
import { adminPage } from "../admin/admin-paging.ts";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import type { SubscriptionDeps } from "./subscription-deps.ts";

/** One attempt of the log as admin/deliveryAttempts and admin/eventDeliveries show it (the event aside). */
export function attemptRecord(a: Omit<DeliveryAttempt, "eventId">) {
  return {
    attemptTimeStamp: formatLocalTimestamp(a.at),
    attemptTime: a.at,
    durationMs: a.durationMs,
    delivered: a.error === null,
    httpStatus: a.status,
    error: a.error,
    excerpt: a.excerpt,
  };
}

const DEFAULT_PAGE_SIZE = 20;

/**
 * admin/deliveryAttempts?subscriptionId=ID[&pageNumber=1&pageSize=20] (an extension, served like
 * admin/deadLetters): the subscription's recorded callback attempts, newest first, in the admin
 * page shape. Each names the event, when the POST started, how long it took, the HTTP status (null
 * when none came back), the error (null when delivered) and the start of the answer's body.
 * Absent id → missing parameter; blank → 100503; no such subscription → 100504; a page number
 * below 1 → 100104; a size outside 1–100 → 100107.
 */
export function deliveryAttemptsOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "admin/deliveryAttempts",
    kind: "admin",
    variants: ["L", "M", "E"],
    // Receivers' answers (excerpts) of any subscription in any group: not for every reader.
    role: "admin",
    groupScope: "all",
    async handle(ctx) {
      const raw = ctx.params.required("subscriptionId");
      const pageNumber = ctx.params.optionalInt("pageNumber") ?? 1;
      const pageSize = ctx.params.optionalInt("pageSize") ?? DEFAULT_PAGE_SIZE;
      if (isBlank(raw)) throw BrokerError.of("SUBSCRIPTION_ID_BLANK");
      if (pageNumber < 1) throw BrokerError.of("PAGE_INDEX_INVALID");
      if (pageSize < 1 || pageSize > 100) throw BrokerError.of("PAGE_SIZE_INVALID");
      const id = raw.toLowerCase();
      const sub = holdsNul(id) ? null : await deps.deliveries.subscription(id);
      if (!sub) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
      const page = await deps.attemptLog.page(sub.id, pageNumber, pageSize);
      return data(
        adminPage(
          page.total,
          pageNumber,
          pageSize,
          page.attempts.map((a) => ({ eventId: a.eventId, ...attemptRecord(a) })),
        ),
      );
    },
  };
}
