import {
  encodeSubscriptionEntry,
  recordedState,
  type SubscriptionRecord,
  subscriptionRecordKey,
  subscriptionsTopicName,
} from "@evb/domain";
import type { ChainLogWriter } from "@evb/eventlog";
import type { SubscriptionRecords } from "@evb/storage";
import { recordWithin } from "../topics/topic-recorder.ts";

/** Writes of one change at most: a record found stale after its write is written again. */
const MAX_WRITES = 4;

export interface SubscriptionRecorderOptions {
  writer: ChainLogWriter;
  records: SubscriptionRecords;
  topicPrefix: string;
  /** How long subscribe or unSubscribe waits for Kafka per write before answering its failure (ms). */
  timeoutMs: number;
}

/**
 * Writes a subscription's row, as it stands after subscribe or unSubscribe committed it, to its
 * group's subscriptions topic, and resolves once every in-sync replica has it: a rebuilt ledger
 * gets the subscription back from there (docs/ledger.md). Two gateways changing one id at once
 * may land their records in Kafka in the other order than their commits; so after each write the
 * row is read again, and written again if it says something else by then: the last record in
 * Kafka is the row's latest state. Rejects when Kafka refused or did not answer in time.
 */
export function subscriptionRecorder(o: SubscriptionRecorderOptions): (id: string) => Promise<void> {
  const put = (r: SubscriptionRecord) =>
    recordWithin(
      o.writer.writeMessages(subscriptionsTopicName(o.topicPrefix, r.groupId), [
        { key: subscriptionRecordKey(r.id), value: encodeSubscriptionEntry(r) },
      ]),
      o.timeoutMs,
      "subscription record",
    );
  return async (id) => {
    let record = await o.records.recordOf(id);
    for (let writes = 0; record && writes < MAX_WRITES; writes++) {
      await put(record);
      const now = await o.records.recordOf(id);
      if (!now || recordedState(now) === recordedState(record)) return;
      record = now;
    }
  };
}
