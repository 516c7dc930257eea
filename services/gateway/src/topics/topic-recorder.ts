import { chainTopicName } from "@evb/domain";
import type { ChainLogWriter } from "@evb/eventlog";
import type { TopicRow } from "@evb/storage";

export interface TopicRecorderOptions {
  writer: ChainLogWriter;
  topicPrefix: string;
  /** How long `open` waits for Kafka before answering that the topic was not created (ms). */
  timeoutMs: number;
}

/**
 * Writes an opened topic's row to its group's chain topic and resolves once every in-sync
 * replica has it; rejects when Kafka refused it or did not answer within `timeoutMs` (then
 * `open` answers its failure code, and a later write or open of the same topic still lands
 * with the same values).
 */
export function topicRecorder(o: TopicRecorderOptions): (row: TopicRow) => Promise<void> {
  return async (row) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Kafka did not take the topic record within ${o.timeoutMs} ms`)), o.timeoutMs);
    });
    try {
      await Promise.race([
        o.writer.writeTopic(chainTopicName(o.topicPrefix, row.groupId), {
          v: 1,
          kind: "topic",
          groupId: row.groupId,
          name: row.name,
          address: row.address,
          creator: row.creator,
          createdAtMs: row.createdAt,
        }),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
}
