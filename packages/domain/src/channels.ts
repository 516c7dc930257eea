/**
 * Redis pub/sub channels between the services. Both are hints: losing a message costs latency
 * (a TIMEOUT answer, a notifier poll), never an event, because the ledger is the truth.
 */

/** Indexer → one gateway instance: receipts `[{requestId, eventId, height}]` of its publishes. */
export function receiptChannel(prefix: string, gatewayId: string): string {
  return `${prefix}:receipt:${gatewayId}`;
}

/** Indexer → notifiers: `{groupId, height}` after every block commit. */
export function blocksChannel(prefix: string): string {
  return `${prefix}:blocks`;
}
