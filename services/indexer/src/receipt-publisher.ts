import type { Redis } from "ioredis";
import {
  type BlockNudge,
  bestEffort,
  type KeyedAnswer,
  type Logger,
  parseEventId,
  type Receipt,
  redisKeys,
  type SealedBlock,
} from "@evb/domain";
import type { Receipts } from "./ports.ts";

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
  const keys = redisKeys(prefix);
  const nudge: BlockNudge = { groupId: block.groupId, height: block.height };
  const pipe = redis.pipeline();
  for (const [gatewayId, receipts] of byGateway) pipe.publish(keys.receiptChannel(gatewayId), JSON.stringify(receipts));
  pipe.publish(keys.blocksChannel, JSON.stringify(nudge));
  await pipe.exec();
}

const ANNOUNCE_TIMEOUT_MS = 2_000;

/**
 * Receipts and the notifiers' nudge, right after the commit and never awaited by the batch:
 * they are hints (the ledger is the truth), so a slow or unreachable Redis must not stall
 * indexing. While Redis is not connected they are dropped rather than queued without bound.
 */
function announceInBackground(redis: Redis, prefix: string, block: SealedBlock, logger: Logger): void {
  if (redis.status !== "ready") {
    logger.warn(
      { groupId: block.groupId, height: block.height, redis: redis.status },
      "Redis not ready; block not announced (publishers may see TIMEOUT)",
    );
    return;
  }
  void bestEffort(() => announceBlock(redis, prefix, block), {
    what: `announce block ${block.groupId}/${block.height}`,
    cost: "publishers may see TIMEOUT",
    timeoutMs: ANNOUNCE_TIMEOUT_MS,
    logger,
  });
}

/**
 * Receipts of keyed publishes answered without an event (docs/idempotency.md), one message per
 * waiting gateway; best effort like every receipt: a lost one costs a TIMEOUT, and the publisher's
 * retry with its key is answered again.
 */
function answerInBackground(redis: Redis, prefix: string, answers: readonly KeyedAnswer[], logger: Logger): void {
  if (redis.status !== "ready") {
    logger.warn(
      { answers: answers.length, redis: redis.status },
      "Redis not ready; keyed publishes not answered (publishers may see TIMEOUT)",
    );
    return;
  }
  const byGateway = new Map<string, Receipt[]>();
  for (const a of answers) {
    const list = byGateway.get(a.gatewayId) ?? [];
    const parsed = parseEventId(a.eventId);
    const height = parsed.ok ? Number(parsed.value.block) : 0;
    list.push({ requestId: a.requestId, eventId: a.eventId, height, idempotency: a.outcome });
    byGateway.set(a.gatewayId, list);
  }
  const keys = redisKeys(prefix);
  void bestEffort(
    async () => {
      const pipe = redis.pipeline();
      for (const [gatewayId, receipts] of byGateway) pipe.publish(keys.receiptChannel(gatewayId), JSON.stringify(receipts));
      await pipe.exec();
    },
    { what: "answer keyed publishes", cost: "publishers may see TIMEOUT", timeoutMs: ANNOUNCE_TIMEOUT_MS, logger },
  );
}

/** The `Receipts` port over Redis pub/sub. */
export function redisReceipts(redis: Redis, prefix: string, logger: Logger): Receipts {
  return {
    announce: (block) => announceInBackground(redis, prefix, block, logger),
    answer: (answers) => answerInBackground(redis, prefix, answers, logger),
  };
}
