import { z } from "zod";
import { decodeJsonRecord } from "./json-record.ts";
import { SubscriptionSettings } from "./subscription-settings.ts";

/**
 * What a rebuilt ledger needs to hold a callback subscription again, written to the group's
 * subscriptions topic (compacted, one partition; `subscriptionsTopicName`) before subscribe or
 * unSubscribe answers: who owns it, what it matches, where it calls, whether it is live, every
 * ending, and where delivery stood. Keyed by `subscriptionRecordKey`, so compaction keeps the
 * latest state of each subscription.
 */
const Position = z.object({ height: z.number().int().nonnegative(), idx: z.number().int().nonnegative() });
export type DeliveredPosition = z.infer<typeof Position>;

const Rule = z.enum(["M", "E"]);

export const SubscriptionRecord = z.object({
  v: z.literal(1),
  kind: z.literal("subscription"),
  groupId: z.string().min(1),
  id: z.string().min(1),
  topic: z.string().min(1),
  matchRule: Rule,
  bodyVariant: Rule,
  url: z.string(),
  nodeInstance: z.string(),
  remoteIp: z.string(),
  interfaceType: z.string(),
  owner: z.string(),
  createdAtMs: z.number().int(),
  active: z.boolean(),
  /** The delivery cursor when the record was written (a created subscription's start). */
  delivered: Position,
  deliveredCount: z.number().int().nonnegative(),
  unsubscribedBy: z.string().nullable(),
  unsubscribedAtMs: z.number().int().nullable(),
  /** Every ending (newest `MAX_RECORDED_ENDINGS`), oldest first. */
  endings: z.array(z.object({ owner: z.string(), endedBy: z.string(), endedAtMs: z.number().int() })),
  /** Its own settings (paused, rate, retries, window, signing secrets); absent: the deployment's. */
  settings: SubscriptionSettings.optional(),
});
export type SubscriptionRecord = z.infer<typeof SubscriptionRecord>;

/**
 * Where a subscription's delivery stood, written by the notifiers at a bounded interval
 * (`DELIVERY_CHECKPOINT_MS`): a rebuilt ledger resumes callbacks from here, so at most one
 * interval's callbacks are sent again and none is skipped (a checkpoint is only ever a position
 * Postgres had already recorded as delivered).
 */
export const DeliveryCheckpoint = z.object({
  v: z.literal(1),
  kind: z.literal("checkpoint"),
  groupId: z.string().min(1),
  id: z.string().min(1),
  delivered: Position,
  deliveredCount: z.number().int().nonnegative(),
  atMs: z.number().int(),
});
export type DeliveryCheckpoint = z.infer<typeof DeliveryCheckpoint>;

/** Endings kept in a record: the newest, so a record stays small whatever the history. */
export const MAX_RECORDED_ENDINGS = 50;

/** The compacted single-partition Kafka topic holding a group's subscription records and checkpoints. */
export function subscriptionsTopicName(prefix: string, groupId: string): string {
  return `${prefix}subscriptions.${groupId}`;
}

export function subscriptionRecordKey(id: string): string {
  return `subscription:${id}`;
}

export function checkpointKey(id: string): string {
  return `checkpoint:${id}`;
}

export function encodeSubscriptionEntry(r: SubscriptionRecord | DeliveryCheckpoint): Buffer {
  return Buffer.from(JSON.stringify(r), "utf8");
}

const Entry = z.discriminatedUnion("kind", [SubscriptionRecord, DeliveryCheckpoint]);

/** A subscriptions-topic message as a record or a checkpoint; null for anything else. */
export function decodeSubscriptionEntry(value: Buffer | null): SubscriptionRecord | DeliveryCheckpoint | null {
  return decodeJsonRecord(Entry, value);
}

/** A subscription as a rebuild restores it: its latest record and where its delivery stood. */
export interface SubscriptionState {
  record: SubscriptionRecord;
  delivered: DeliveredPosition;
  deliveredCount: number;
}

/** `a` is before `b` in ledger order. */
function before(a: DeliveredPosition, b: DeliveredPosition): boolean {
  return a.height < b.height || (a.height === b.height && a.idx < b.idx);
}

/**
 * Each subscription of `groupId` in a subscriptions topic read in offset order: its latest
 * record, and the furthest delivered position among that record and its checkpoints (every one
 * of them was recorded as delivered by Postgres, so the furthest is the truth; an older one only
 * means callbacks sent again). A checkpoint without a record is ignored: without its owner and
 * URL there is nothing to restore.
 */
export function subscriptionStates(entries: Iterable<SubscriptionRecord | DeliveryCheckpoint>, groupId: string): SubscriptionState[] {
  const records = new Map<string, SubscriptionRecord>();
  const furthest = new Map<string, { delivered: DeliveredPosition; deliveredCount: number }>();
  for (const e of entries) {
    if (e.groupId !== groupId) continue;
    if (e.kind === "subscription") records.set(e.id, e);
    const seen = furthest.get(e.id);
    if (!seen || before(seen.delivered, e.delivered)) furthest.set(e.id, { delivered: e.delivered, deliveredCount: e.deliveredCount });
  }
  return [...records.values()].map((record) => {
    const f = furthest.get(record.id) ?? record;
    return { record, delivered: f.delivered, deliveredCount: f.deliveredCount };
  });
}

/**
 * The part of a record that a later change of the subscription can make stale (everything but
 * the delivery position, which checkpoints carry on): two records with equal `recordedState`
 * say the same thing.
 */
export function recordedState(r: SubscriptionRecord): string {
  const { delivered: _d, deliveredCount: _c, ...rest } = r;
  return JSON.stringify(rest);
}
