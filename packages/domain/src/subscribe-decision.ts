/** What subscribe finds under the requested id (the row, live or ended), as far as deciding goes. */
export interface ExistingSubscription {
  active: boolean;
  groupId: string;
  topic: string;
  /** Who created it: the caller address, or `key:<id>` when API keys are on. */
  owner: string;
}

export interface SubscribeAsk {
  groupId: string;
  topic: string;
  /** Who asks, in the same form as ExistingSubscription.owner. */
  owner: string;
}

/**
 * An id, once owned, stays owned (docs/security.md, "Subscription ownership"):
 * - create: a new subscription starting after the latest event (no such id, or the owner takes
 *   its ended id for another group or topic).
 * - resume: the owner takes its ended id back with the same group and topic: delivery resumes
 *   after the last delivered event (behaviour.md 10.3).
 * - continue: the id is live with the same group and topic; the same id is answered. The owner
 *   switches the callback to the newly checked URL (10.4); anyone else changes nothing, so the
 *   events keep going to the old URL (the original's behaviour), since admin/listSubscription
 *   shows every id to every caller and a switch by a stranger would hand it the events.
 * - decline: the id is ended and someone other than its owner asks. The same id is answered (the
 *   reply is always the id, 8.2) but nothing is taken: neither the id's ownership nor its resume
 *   position. Otherwise ending an id (anyone may, without keys) and taking it again would hand a
 *   stranger the owner's subscription, and block the owner's resume.
 * - mismatch: the id is live with another group or topic (100108).
 */
export type SubscribeDecision =
  | { kind: "create" }
  | { kind: "resume" }
  | { kind: "continue"; switchUrl: boolean }
  | { kind: "decline" }
  | { kind: "mismatch" };

export function decideSubscribe(existing: ExistingSubscription | null, ask: SubscribeAsk): SubscribeDecision {
  if (!existing) return { kind: "create" };
  const same = existing.groupId === ask.groupId && existing.topic === ask.topic;
  const owner = existing.owner === ask.owner;
  if (existing.active) return same ? { kind: "continue", switchUrl: owner } : { kind: "mismatch" };
  if (!owner) return { kind: "decline" };
  return same ? { kind: "resume" } : { kind: "create" };
}
