import type { Redis } from "ioredis";
import { blocksChannel, type Logger, type Receipt, receiptChannel, type SealedBlock } from "@evb/domain";

/**
 * After a block commits: one message per waiting gateway with its receipts, and one "new
 * block" nudge for the notifiers. Both are best effort; the ledger is the truth, so a lost
 * message costs a TIMEOUT answer or a notifier poll, never an event.
 */
async function announceBlock(redis: Redis, prefix: string, block: SealedBlock): Promise<void> {
  const byGateway = new Map<string, Receipt[]>();
  for (const e of block.events) {
    const list = byGateway.get(e.record.gatewayId) ?? [];
    list.push({ requestId: e.record.requestId, eventId: e.eventId, height: block.height });
    byGateway.set(e.record.gatewayId, list);
  }
  const pipe = redis.pipeline();
  for (const [gatewayId, receipts] of byGateway) pipe.publish(receiptChannel(prefix, gatewayId), JSON.stringify(receipts));
  pipe.publish(blocksChannel(prefix), JSON.stringify({ groupId: block.groupId, height: block.height }));
  await pipe.exec();
}

/**
 * Receipts and the notifiers' nudge, right after the commit and never awaited by the batch:
 * they are hints (the ledger is the truth), so a slow or unreachable Redis must not stall
 * indexing. While Redis is not connected they are dropped rather than queued without bound.
 */
export function announceInBackground(redis: Redis, prefix: string, block: SealedBlock, logger: Logger): void {
  if (redis.status !== "ready") {
    logger.warn(
      { groupId: block.groupId, height: block.height, redis: redis.status },
      "Redis not ready; block not announced (publishers may see TIMEOUT)",
    );
    return;
  }
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("timed out after 2000 ms")), 2000).unref());
  Promise.race([announceBlock(redis, prefix, block), timeout]).catch((err) =>
    logger.warn({ err: String(err) }, "could not announce a block; publishers may see TIMEOUT"),
  );
}
