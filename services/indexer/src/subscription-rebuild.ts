import { decodeSubscriptionEntry, type Logger, subscriptionStates } from "@evb/domain";
import { type KafkaClient, type LogInspector, readOffsetRanges } from "@evb/eventlog";
import type { SubscriptionRecords } from "@evb/storage";

export interface SubscriptionRebuildOptions {
  kafka: KafkaClient;
  groupId: string;
  /** The group's subscriptions topic. */
  topic: string;
  inspector: LogInspector;
  records: SubscriptionRecords;
  logger: Logger;
}

/**
 * Brings back the subscriptions a ledger lost (schema dropped, an empty or older database), from
 * the group's subscriptions topic: each as its latest record says, delivered up to its furthest
 * checkpoint, after the blocks were rebuilt (a restored subscription resumes on them). Ids the
 * ledger holds are left alone. Returns how many were restored.
 */
export async function restoreSubscriptions(o: SubscriptionRebuildOptions): Promise<number> {
  const end = (await o.inspector.offsets(o.topic))[0];
  if (!end || end.high <= end.low) return 0;
  const messages = await readOffsetRanges(o.kafka, o.topic, new Map([[0, { from: end.low, to: end.high - 1 }]]));
  const entries = (messages.get(0) ?? []).flatMap((m) => decodeSubscriptionEntry(m.value) ?? []);
  const states = subscriptionStates(entries, o.groupId);
  if (states.length === 0) return 0;
  const restored = await o.records.restore(o.groupId, states);
  if (restored > 0)
    o.logger.warn(
      { groupId: o.groupId, restored, known: states.length },
      "restored subscriptions the ledger lacked from Kafka; their callbacks resume from their last checkpoints",
    );
  return restored;
}
