/**
 * Alerts to a subscription's owner (issue 23, item 3), pure: which alert a delivery outcome
 * raises, given the alert the subscription raised last, and the alert's body. Each alert fires
 * once per transition, never once per failed attempt: `failing` when the head event's failed
 * attempts reach the deployment's threshold (ALERT_FAILING_AFTER_ATTEMPTS), `suspended` on every
 * dead letter (each one is a new suspension: a suspended subscription is not delivered to until a
 * replay), `recovered` on the first delivery after either.
 */

export const OWNER_ALERT_TYPES = ["subscription.failing", "subscription.suspended", "subscription.recovered"] as const;
export type OwnerAlertType = (typeof OWNER_ALERT_TYPES)[number];

/** The alert a subscription raised last: none ("ok"), failing or suspended. */
export type AlertState = "ok" | "failing" | "suspended";

/** What a delivery slice wrote: a failed attempt (dead: the subscription was suspended) or a delivery. */
export type DeliveryOutcome = { kind: "failed"; consecutiveFailures: number; dead: boolean } | { kind: "delivered" };

export interface AlertTransition {
  next: AlertState;
  /** The alert to send, or null: no transition (or one that raises nothing). */
  alert: OwnerAlertType | null;
}

/**
 * The alert state after `outcome` and the alert it raises. `failingAfter`: failed attempts in a
 * row after which a subscription is failing (at least 1).
 */
export function alertTransition(state: AlertState, outcome: DeliveryOutcome, failingAfter: number): AlertTransition {
  if (outcome.kind === "delivered") return { next: "ok", alert: state === "ok" ? null : "subscription.recovered" };
  if (outcome.dead) return { next: "suspended", alert: "subscription.suspended" };
  if (state === "ok" && outcome.consecutiveFailures >= failingAfter) return { next: "failing", alert: "subscription.failing" };
  return { next: state, alert: null };
}

/** Whether a failed attempt could raise an alert at all (else no alert state need be read). */
export function mayRaiseAlert(consecutiveFailures: number, dead: boolean, failingAfter: number): boolean {
  return dead || consecutiveFailures >= failingAfter;
}

/** One stored alert (a row of the outbox). */
export interface OwnerAlert {
  /** The outbox row's id: the alert's `webhook-id` is built from it, the same on every try. */
  id: number;
  type: OwnerAlertType;
  subscriptionId: string;
  groupId: string;
  topic: string;
  consecutiveFailures: number;
  lastError: string | null;
  /** Epoch ms when the transition was written. */
  occurredAt: number;
}

/** The alert's `webhook-id`: one per alert, the same on each retry, so a receiver can drop repeats. */
export function alertWebhookId(alert: Pick<OwnerAlert, "id">): string {
  return `msg_alert_${alert.id}`;
}

/** The JSON body POSTed to the alert URL. */
export function alertBody(a: OwnerAlert): string {
  return JSON.stringify({
    type: a.type,
    timestamp: new Date(a.occurredAt).toISOString(),
    data: {
      subscriptionId: a.subscriptionId,
      topic: a.topic,
      groupId: a.groupId,
      consecutiveFailures: a.consecutiveFailures,
      lastError: a.lastError,
    },
  });
}

/** Longest alert URL accepted (characters). */
const MAX_ALERT_URL = 2048;

/**
 * Whether `raw` may be an alert URL: http(s) with a host, at most 2048 characters. Only its
 * form: the address it resolves to is checked at each attempt, as a callback URL's is.
 */
export function isAlertUrl(raw: string): boolean {
  if (raw.length > MAX_ALERT_URL) return false;
  try {
    const u = new URL(raw);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}
