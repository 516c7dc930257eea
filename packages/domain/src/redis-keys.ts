/**
 * Every Redis key and pub/sub channel the services use, built from the one REDIS_PREFIX. The
 * channels carry hints and the keys hold caches: losing either costs latency (a TIMEOUT answer,
 * a notifier poll, counters read from Postgres), never an event, because the ledger is the truth.
 */
export function redisKeys(prefix: string) {
  return {
    /** Indexer → one gateway instance: receipts of its publishes (ReceiptMessage). */
    receiptChannel: (gatewayId: string) => `${prefix}:receipt:${gatewayId}`,
    /** Indexer → notifiers: a block was sealed (BlockNudge). */
    blocksChannel: `${prefix}:blocks`,
    /** Gateway → notifiers: start these subscriptions' delivery now (WakeMessage). */
    wakeChannel: `${prefix}:subscription-wake`,
    /** One hash per node instance: subscription id → counters as admin/listSubscription shows them. */
    statsKey: (nodeInstance: string) => `${prefix}:subscription-stats:${nodeInstance}`,
    /** Gateway ids that list STOMP subscriptions (each has stompSubscriptions; pruned once that expires). */
    stompGateways: `${prefix}:stomp:gateways`,
    /** One hash per gateway process, kept alive while it runs: STOMP subscription id → its listing record. */
    stompSubscriptions: (gatewayId: string) => `${prefix}:stomp:subscriptions:${gatewayId}`,
    /** Per STOMP subscription id: the identity (ownerId) that may resume it (stomp/subscription-owners.ts). */
    stompSubscriptionOwner: (subscriptionId: string) => `${prefix}:stomp:owner:${subscriptionId}`,
    /** Per MQTT client id connected anywhere: "<gatewayId>/<token>" of the connection holding it (a take-over's address). */
    mqttClientOwner: (clientId: string) => `${prefix}:mqtt:owner:${clientId}`,
    /** Gateway → one gateway instance: end your connection holding a client id, and the answer that it has (mqtt/client-owners.ts). */
    mqttTakeoverChannel: (gatewayId: string) => `${prefix}:mqtt:takeover:${gatewayId}`,
    /** Gateway → notifiers: send this test delivery (TestDeliveryRequest); the first to take its claim sends it. */
    testDeliveryChannel: `${prefix}:test-delivery`,
    /** Taken (SET NX) by the one notifier that sends test delivery `requestId`. */
    testDeliveryClaim: (requestId: string) => `${prefix}:test-delivery:claim:${requestId}`,
    /** The notifier's answer (TestDeliveryResult) to the gateway that asked, a list it pops. */
    testDeliveryReply: (requestId: string) => `${prefix}:test-delivery:reply:${requestId}`,
    /** BullMQ's key prefix for the delivery queue. */
    bullPrefix: `${prefix}:bull`,
    /** The node registry's keys (broker and chain nodes, heartbeats). */
    registry: `${prefix}:registry`,
    /** One token bucket per API key for the publish rate limit. */
    publishRateLimit: (keyId: string) => `${prefix}:ratelimit:publish:${keyId}`,
    /** The console's chart history of one group: a sorted set of samples scored by their time, the last hour. */
    consoleHistory: (groupId: string) => `${prefix}:console-history:samples:${groupId}`,
    /** Taken (SET NX) by the one gateway that samples the 10-s slot starting at `slotStart` (epoch ms). */
    consoleHistorySlot: (slotStart: number) => `${prefix}:console-history:slot:${slotStart}`,
    /** Publishes answered by every gateway of the deployment in one group: each adds its own (INCRBY). */
    consoleHistoryPublishes: (groupId: string) => `${prefix}:console-history:publishes:${groupId}`,
  } as const;
}
