import { z } from "zod";
import { decodeJsonRecord } from "./json-record.ts";

/**
 * A topic row as `rest/open` acknowledged it, written to the group's chain topic (keyed by
 * `topicRecordKey`, so compaction keeps one per topic) after the Postgres insert and before
 * the answer: what a rebuilt ledger needs to hold the same topic, even one without events.
 */
export const TopicRecord = z.object({
  v: z.literal(1),
  kind: z.literal("topic"),
  groupId: z.string().min(1),
  name: z.string().min(1),
  address: z.string(),
  creator: z.string(),
  createdAtMs: z.number().int(),
});
export type TopicRecord = z.infer<typeof TopicRecord>;

/** The chain topic's key for a topic record; block records are keyed by their height (digits only). */
export function topicRecordKey(name: string): string {
  return `topic:${name}`;
}

export function encodeTopicRecord(r: TopicRecord): Buffer {
  return Buffer.from(JSON.stringify(r), "utf8");
}

export function decodeTopicRecord(value: Buffer | null): TopicRecord | null {
  return decodeJsonRecord(TopicRecord, value);
}

/**
 * The order a rebuild puts topic records back in: oldest creation first, the chain topic's
 * order among equal times, one record per topic (the first; later ones repeat it).
 */
export function topicsInCreationOrder(records: readonly { offset: number; record: TopicRecord }[]): TopicRecord[] {
  const first = new Map<string, { offset: number; record: TopicRecord }>();
  for (const r of records) {
    const seen = first.get(r.record.name);
    if (!seen || r.offset < seen.offset) first.set(r.record.name, r);
  }
  return [...first.values()].sort((a, b) => a.record.createdAtMs - b.record.createdAtMs || a.offset - b.offset).map((r) => r.record);
}

/**
 * Takes from `pending` (in creation order, consumed in place) the topic records to restore
 * before a block sealed at `sealedAtMs` that uses `used` topics: every one created by then,
 * and any the block uses whatever its clock said, so that no block is sealed before a topic
 * it uses. Returned in creation order.
 */
export function topicsDueBefore(pending: TopicRecord[], sealedAtMs: number, used: ReadonlySet<string>): TopicRecord[] {
  const due: TopicRecord[] = [];
  const rest: TopicRecord[] = [];
  for (const r of pending) (r.createdAtMs <= sealedAtMs || used.has(r.name) ? due : rest).push(r);
  pending.splice(0, pending.length, ...rest);
  return due;
}
