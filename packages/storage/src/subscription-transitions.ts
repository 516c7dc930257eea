import type { SubscribeDecision } from "@evb/domain";

/**
 * The transitions of a subscription row, by name, and what each does (`TRANSITIONS`: what it
 * sets, which counters it moves and who makes it), with the pure decisions that pick one. The
 * statements that make them are in subscription-lifecycle.ts, the one file that writes the row;
 * docs/delivery.md has the same table for readers.
 */
export type Transition =
  // subscribe, unSubscribe and the dead-letter admin (SubscriptionStore, from the gateway)
  | "created"
  | "resumed"
  | "continued"
  | "unsubscribed"
  | "replayed"
  | "rewound"
  // a rebuilt ledger gets the subscription back from its record in Kafka (the indexer's rebuild)
  | "restored"
  // the backlog grows (the notifier's dispatcher; a resumed subscription's refill)
  | "matched"
  | "refilled"
  // a delivery slice (DeliveryStore, from the notifier's delivery worker)
  | "leased"
  | "renewed"
  | "released"
  | "delivered"
  | "failed"
  | "dead";

/** How a transition moves each counter (`n`: the events it concerns; `now`: its time). */
export interface CounterEffect {
  delivered: "keep" | "zero" | "add";
  pending: "keep" | "zero" | "add" | "subtract";
  notifiedAt: "keep" | "clear" | "now";
  rev: "keep" | "bump";
}

export interface TransitionSpec {
  /** Who makes it: the store method, and who calls that. */
  by: string;
  /** What it means. */
  means: string;
  /** Whether the subscription becomes live (matched by the dispatcher) or ends. */
  live: "start" | "end" | "keep";
  /** Takes a new revision, so that the dispatchers' indexes reload the subscription. */
  rematch: boolean;
  /** The head event's retry state: reset (RESET_RETRY_STATE), a failed attempt recorded, or untouched. */
  retry: "reset" | "record" | "keep";
  /** The dead letter: released (RELEASE_DEAD_LETTER), set (delivery suspended) or untouched. */
  deadLetter: "release" | "set" | "keep";
  /**
   * The delivery slice's lease: taken (a new token), extended, ended (`lease_until` 0), revoked
   * (a new token no slice holds, and ended: a slice still running can record nothing more and
   * the next job leases at once), or untouched.
   */
  lease: "take" | "extend" | "end" | "revoke" | "keep";
  counters: CounterEffect;
}

const NO_COUNTERS: CounterEffect = { delivered: "keep", pending: "keep", notifiedAt: "keep", rev: "keep" };
const PENDING_ZERO: CounterEffect = { ...NO_COUNTERS, pending: "zero", rev: "bump" };
const PENDING_ADD: CounterEffect = { ...NO_COUNTERS, pending: "add", rev: "bump" };

export const TRANSITIONS: { readonly [T in Transition]: TransitionSpec } = {
  created: {
    by: "SubscriptionStore.subscribe ← gateway subscribe (no such id, or its owner takes the ended id for another topic)",
    means: "a new subscription, starting after the group's latest block; an old row under the id starts afresh",
    live: "start",
    rematch: true,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: { delivered: "zero", pending: "zero", notifiedAt: "clear", rev: "bump" },
  },
  resumed: {
    by: "SubscriptionStore.subscribe ← gateway subscribe (the owner takes its ended id back, same group and topic)",
    means: "live again after its last delivered event; what was missed is recorded to be refilled",
    live: "start",
    rematch: true,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: PENDING_ZERO,
  },
  continued: {
    by: "SubscriptionStore.subscribe ← gateway subscribe (the owner, live id, same group and topic)",
    means: "the URL is switched and a dead letter released",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  unsubscribed: {
    by: "SubscriptionStore.unsubscribe ← gateway unSubscribe",
    means: "ended: no more matching, backlog dropped; the row keeps its delivery cursor for a resume",
    live: "end",
    rematch: true,
    retry: "reset",
    deadLetter: "release",
    lease: "revoke",
    counters: PENDING_ZERO,
  },
  replayed: {
    by: "SubscriptionStore.replay ← gateway admin/replayDeadLetters",
    means: "a dead-lettered subscription's head gets a fresh retry budget; delivery resumes",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "release",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  rewound: {
    by: "SubscriptionStore.rewind ← gateway admin/replayDeadLetters with fromTime or fromEventId",
    means:
      "delivery goes back to a position (never forward): the cursor moves there, the backlog is dropped and refilled from there up to the dispatch position, so every event after it is delivered again, in order",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "release",
    lease: "revoke",
    counters: PENDING_ZERO,
  },
  restored: {
    by: "SubscriptionRestore.restore ← indexer ledger rebuild (from the group's subscriptions topic)",
    means:
      "a subscription the ledger lost, inserted as its latest record says (live or ended, owner, URL, endings) with the delivery cursor and count of its furthest checkpoint; a live one matches and refills from there",
    live: "keep",
    rematch: true,
    retry: "keep",
    deadLetter: "keep",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  matched: {
    by: "DispatchRun.write ← notifier dispatcher (LedgerDispatch)",
    means: "sealed events appended to the backlog (in the transaction that moves the group's cursor)",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "keep",
    counters: PENDING_ADD,
  },
  refilled: {
    by: "DeliveryStore.catchUp ← notifier delivery slice",
    means: "one page of a resumed subscription's missed events appended to the backlog; the refill ends with the last",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "extend",
    counters: PENDING_ADD,
  },
  leased: {
    by: "DeliveryStore.lease ← notifier delivery slice",
    means: "a delivery slice takes the row's lease (fencing token) unless another one's is running",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "take",
    counters: NO_COUNTERS,
  },
  renewed: {
    by: "DeliveryStore.renew ← notifier delivery slice",
    means: "the slice's lease extended",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "extend",
    counters: NO_COUNTERS,
  },
  released: {
    by: "DeliveryStore.release ← notifier delivery slice",
    means: "the slice ended: the next one may start at once",
    live: "keep",
    rematch: false,
    retry: "keep",
    deadLetter: "keep",
    lease: "end",
    counters: NO_COUNTERS,
  },
  delivered: {
    by: "DeliveryStore.deliveredBatch (delivered) ← notifier delivery slice",
    means: "events delivered: their backlog rows go, the cursor moves to the last",
    live: "keep",
    rematch: false,
    retry: "reset",
    deadLetter: "keep",
    lease: "extend",
    counters: { delivered: "add", pending: "subtract", notifiedAt: "now", rev: "bump" },
  },
  failed: {
    by: "DeliveryStore.failed (deadAt null) ← notifier delivery slice",
    means: "a failed attempt at the head event, to be retried at nextAttemptAt",
    live: "keep",
    rematch: false,
    retry: "record",
    deadLetter: "keep",
    lease: "keep",
    counters: NO_COUNTERS,
  },
  dead: {
    by: "DeliveryStore.failed (deadAt set) ← notifier delivery slice",
    means: "the last failed attempt: the head is dead-lettered and delivery suspended until a replay or continue",
    live: "keep",
    rematch: false,
    retry: "record",
    deadLetter: "set",
    lease: "keep",
    counters: NO_COUNTERS,
  },
};

// --- Pure decisions ---

/** Which transition a failed attempt makes: `deadAt` set suspends delivery. */
export function failureTransition(deadAt: number | null): "failed" | "dead" {
  return deadAt === null ? "failed" : "dead";
}

/** Which transition a subscribe decision makes; null when it leaves the row as it is. */
export function subscribeTransition(d: SubscribeDecision): "created" | "resumed" | "continued" | null {
  if (d.kind === "create") return "created";
  if (d.kind === "resume") return "resumed";
  if (d.kind === "continue" && d.switchUrl) return "continued";
  return null;
}
