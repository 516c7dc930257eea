import type { Variant } from "@evb/domain";
import type { TopicRow } from "@evb/storage";

/**
 * TopicState / TopicInfo in the variant's fields and key order. The seed is explicit about
 * the fields per variant, and behaviour.md section 0 says the seed wins: L carries all nine
 * keys (topicAddress, lastSender and lastBlock always null, 6.2), M the six up to blockNumber,
 * E the four TopicInfo keys with the contract address.
 */
export function topicView(variant: Variant, t: TopicRow): Record<string, unknown> {
  if (variant === "E") {
    return { topicName: t.name, topicAddress: t.address, senderAddress: t.creator, createdTimestamp: t.createdAt };
  }
  const state: Record<string, unknown> = {
    topicName: t.name,
    topicAddress: null,
    senderAddress: t.creator,
    createdTimestamp: t.createdAt,
    sequenceNumber: t.seq,
    blockNumber: t.lastBlock,
  };
  if (variant === "L") {
    state.lastTimestamp = t.lastTimestamp;
    state.lastSender = null;
    state.lastBlock = null;
  }
  return state;
}
