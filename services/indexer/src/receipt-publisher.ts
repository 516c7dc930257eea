import type { Redis } from "ioredis";
import { blocksChannel, type Receipt, receiptChannel, type SealedBlock } from "@evb/domain";

/**
 * After a block commits: one message per waiting gateway with its receipts, and one "new
 * block" nudge for the notifiers. Both are best effort; the ledger is the truth, so a lost
 * message costs a TIMEOUT answer or a notifier poll, never an event.
 */
export async function announceBlock(redis: Redis, prefix: string, block: SealedBlock): Promise<void> {
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
