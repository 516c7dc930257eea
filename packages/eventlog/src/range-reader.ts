import type { Kafka, KafkaMessage } from "kafkajs";

/** Offsets `from` to `to` (both included) of one partition. */
export interface OffsetRange {
  from: number;
  to: number;
}

/**
 * Reads the given offset ranges of a topic's partitions, once, with a throwaway consumer group
 * (kafkajs has no group-less consumer). Messages outside the ranges are dropped. Rejects after
 * `timeoutMs` when the ranges could not all be read (check the log still holds them first).
 */
export async function readOffsetRanges(
  kafka: Kafka,
  topic: string,
  ranges: ReadonlyMap<number, OffsetRange>,
  opts: { groupId: string; timeoutMs?: number },
): Promise<Map<number, KafkaMessage[]>> {
  const out = new Map<number, KafkaMessage[]>();
  const pending = new Set([...ranges].filter(([, r]) => r.to >= r.from).map(([p]) => p));
  if (pending.size === 0) return out;
  const consumer = kafka.consumer({ groupId: opts.groupId, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    consumer.on(consumer.events.GROUP_JOIN, () => {
      for (const [partition, r] of ranges) if (pending.has(partition)) consumer.seek({ topic, partition, offset: String(r.from) });
    });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const r = ranges.get(batch.partition);
        if (!r || !pending.has(batch.partition)) return;
        const list = out.get(batch.partition) ?? [];
        for (const m of batch.messages) {
          const o = Number(m.offset);
          if (o >= r.from && o <= r.to && !list.some((x) => x.offset === m.offset)) list.push(m);
        }
        out.set(batch.partition, list);
        if (Number(batch.lastOffset()) >= r.to) {
          pending.delete(batch.partition);
          if (pending.size === 0) finish();
        }
      },
    });
    const timeoutMs = opts.timeoutMs ?? 60_000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      finished,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`could not read ${topic} partitions ${[...pending].join(", ")} within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  } finally {
    await consumer.disconnect();
  }
  for (const list of out.values()) list.sort((a, b) => Number(a.offset) - Number(b.offset));
  return out;
}
