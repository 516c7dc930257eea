export {
  BlockSealer,
  LedgerFenceError,
  type ReplayMetadata,
  readFenceReading,
  readLedgerFence,
  type SealOptions,
  type SealResult,
  type Sealer,
} from "./block-sealer.ts";
export { type BlockRow, type ChainTotals, ChainStore, type TransactionRow } from "./chain-store.ts";
export { type DeliveryAttempt, DeliveryAttemptStore, EXCERPT_BYTES, excerptOf } from "./delivery-attempt-store.ts";
export { type DeliveryGaugeValues, deliveryGaugeValues, type LedgerGaugeValues, ledgerGaugeValues } from "./metrics-queries.ts";
export { type EventRow, EventStore } from "./event-store.ts";
export { type EventAttempt, type EventQuery, EventReads, type FoundEvent, type SubscriptionPosition } from "./event-reads.ts";
export { type EventDeliveryFacts, type EventDeliveryState, eventDeliveryState } from "./event-delivery-state.ts";
export { secretsAtRest } from "./secret-box.ts";
export { SubscriptionSettingsStore } from "./subscription-settings-store.ts";
export { type ClaimedAlert, OwnerAlertStore } from "./owner-alert-store.ts";
export { type MqttSessionRow, MqttSessionStore } from "./mqtt-session-store.ts";
export { type ResendItem, type ResendOutcome, ResendStore } from "./resend-store.ts";
export { AFTER_BLOCK, type BlockTopics, EventFeed, type FeedEvent, type FeedPosition } from "./event-feed.ts";
export { ChainRecordStore } from "./chain-record-store.ts";
export { LogEpochStore } from "./log-epoch-store.ts";
export { LedgerIdentityStore } from "./ledger-identity-store.ts";
export { loadMigrations, type Migration, migrate } from "./migrate.ts";
export { inTransaction, isStorageTimeout, poolOptions } from "./pool.ts";
export { type TopicRow, TopicStore } from "./topic-store.ts";
export { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
export { type SubscribeOutcome, type SubscribeRequest, SubscriptionStore, type UnsubscribeBy } from "./subscription-store.ts";
export { type DeliveredCursor, SubscriptionRecords } from "./subscription-records.ts";
export { type SubscriptionCounters, type SubscriptionRow, type SubscriptionStats, statsOfRow } from "./subscription-row.ts";
export { API_ROLES, type ApiKeyRecord, type ApiRole, hashKeySecret, newApiKey, parseApiKey } from "./api-keys.ts";
export { ApiKeyStore } from "./api-key-store.ts";
export {
  type BacklogItem,
  type CatchUpResult,
  type DeliveryBatch,
  DeliveryStore,
  type LeaseResult,
} from "./delivery-store.ts";
export type { FailedAttempt } from "./subscription-writes.ts";
export { type DispatchRead, DispatchRun, DispatchStore, type SubscriptionChange } from "./dispatch-store.ts";
export { CHURNING_TABLES, type MaintenanceRound, TableMaintenanceStore } from "./table-maintenance-store.ts";
