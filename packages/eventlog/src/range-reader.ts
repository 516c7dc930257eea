import type { KafkaClient } from "./kafka-client.ts";
import { type FetchPosition, LogFetcher, type LogMessage } from "./log-fetcher.ts";

/** Offsets `from` to `to` (both included) of one partition. */
export interface OffsetRange {
  from: number;
  to: number;
}

/** A failed round is tried again after this long (ms); the deadline bounds the whole read. */
const RETRY_MS = 250;

/**
 * Reads the given offset ranges of a topic's partitions, once, at explicit offsets (no consumer
 * group, nothing committed). Messages outside the ranges are dropped. Rejects after `timeoutMs`
 * when the ranges could not all be read, or at once when the log no longer holds an offset asked
 * for (check the log still holds them first).
 */
export async function readOffsetRanges(
  kafka: KafkaClient,
  topic: string,
  ranges: ReadonlyMap<number, OffsetRange>,
  opts: { timeoutMs?: number } = {},
): Promise<Map<number, LogMessage[]>> {
  const out = new Map<number, LogMessage[]>();
  const next = new Map([...ranges].filter(([, r]) => r.to >= r.from).map(([p, r]) => [p, r.from]));
  if (next.size === 0) return out;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  const fetcher = new LogFetcher(kafka, { name: "range-reader", maxWaitMs: 100, maxBytesPerPartition: 1_048_576 });
  let last: unknown;
  try {
    while (next.size > 0) {
      if (Date.now() > deadline) {
        throw new Error(`could not read ${topic} partitions ${[...next.keys()].join(", ")} within ${timeoutMs} ms: ${String(last)}`);
      }
      const positions: FetchPosition[] = [...next].map(([partition, offset]) => ({ topic, partition, offset }));
      const fetched = await fetcher.fetch(positions).catch((err: unknown) => {
        last = err;
        return null;
      });
      if (!fetched) {
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      for (const f of fetched) take(f, ranges.get(f.partition) as OffsetRange, out, next, topic);
    }
  } finally {
    await fetcher.close();
  }
  return out;
}

/** Keeps what a fetch brought of a partition's range, and moves its next offset on (or drops it, read). */
function take(
  f: { partition: number; messages: LogMessage[]; next: number; outOfRange?: number },
  range: OffsetRange,
  out: Map<number, LogMessage[]>,
  next: Map<number, number>,
  topic: string,
): void {
  if (f.outOfRange !== undefined) {
    throw new Error(`${topic} partition ${f.partition} no longer holds offset ${next.get(f.partition)} (it starts at ${f.outOfRange})`);
  }
  const list = out.get(f.partition) ?? [];
  for (const m of f.messages) if (m.offset >= range.from && m.offset <= range.to) list.push(m);
  out.set(f.partition, list);
  if (f.next > range.to) next.delete(f.partition);
  else next.set(f.partition, f.next);
}
