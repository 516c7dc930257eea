import { chainTopicName, TIMED_OUT, withTimeout } from "@evb/domain";
import type { ChainLogWriter } from "@evb/eventlog";
import type { TopicRow } from "@evb/storage";

export interface TopicRecorderOptions {
  writer: ChainLogWriter;
  topicPrefix: string;
  /** How long `open` waits for Kafka before answering that the topic was not created (ms). */
  timeoutMs: number;
}

/**
 * Waits for a write of a record to Kafka at most `timeoutMs`; rejects with what happened when it
 * failed or did not answer in time (the caller answers its failure code; the write may still land).
 */
export async function recordWithin(write: Promise<void>, timeoutMs: number, what: string): Promise<void> {
  if ((await withTimeout(write, timeoutMs)) === TIMED_OUT) throw new Error(`Kafka did not take the ${what} within ${timeoutMs} ms`);
}

/**
 * Writes an opened topic's row to its group's chain topic and resolves once every in-sync
 * replica has it; rejects when Kafka refused it or did not answer within `timeoutMs` (then
 * `open` answers its failure code, and a later write or open of the same topic still lands
 * with the same values).
 */
export function topicRecorder(o: TopicRecorderOptions): (row: TopicRow) => Promise<void> {
  return (row) =>
    recordWithin(
      o.writer.writeTopic(chainTopicName(o.topicPrefix, row.groupId), {
        v: 1,
        kind: "topic",
        groupId: row.groupId,
        name: row.name,
        address: row.address,
        creator: row.creator,
        createdAtMs: row.createdAt,
      }),
      o.timeoutMs,
      "topic record",
    );
}
