export { BROKER_ERRORS, BrokerError, type BrokerErrorName, GENERIC_CODE } from "./errors.ts";
export { FAILURE_KINDS, type FailureKind, ServiceError } from "./failures.ts";
export { classifyPgFailure } from "./pg-failure.ts";
export { certainlyNotWritten, classifyKafkaFailure, isRetriableKafkaFailure } from "./kafka-failure.ts";
export { type KafkaLinkSettings, kafkaLinkProblem } from "./kafka-link-problem.ts";
export {
  CALLBACK_FAILURE_KINDS,
  type CallbackFailureKind,
  classifyHttpStatus,
  classifyNetworkError,
  isDeliveredStatus,
  suspendsAtOnce,
} from "./http-failure.ts";
export { formatLocalTimestamp, holdsNul, isBlank, isJavaWhitespace, javaSplit, parseJavaInteger, replaceNul } from "./text.ts";
export { checkTopicName, isPattern, TOPIC_MAX_LENGTH } from "./topic-name.ts";
export { EVENT_ID_MAX_LENGTH, formatEventId, type ParsedEventId, parseEventId, topicHash8 } from "./event-id.ts";
export {
  CONTENT_MAX_LENGTH,
  checkContent,
  checkExtensions,
  EXTENSION_PREFIX,
  EXTENSIONS_MAX_LENGTH,
  renderedExtensionsLength,
} from "./event-content.ts";
export { BRANDS, type Brand, NEUTRAL_SPELLING, Spelling } from "./spelling.ts";
export {
  type BlockHashInput,
  blockHash,
  GENESIS_HASH,
  senderAddress,
  topicAddress,
  transactionHash,
  type TxHashInput,
} from "./chain.ts";
export {
  type BlockPlan,
  type LedgerHead,
  type LogRange,
  type OffsetGap,
  type PlanOptions,
  type PositionedRecord,
  planBlock,
  type SealedBlock,
  type SealedEvent,
  sortRecords,
} from "./block-plan.ts";
export {
  DEFAULT_IDEMPOTENCY_RETENTION_MS,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PARAM,
  idempotencyKeyOf,
  type KeptKey,
  type KeyedAnswer,
  type NewKey,
  scopedIdempotencyKey,
} from "./idempotency.ts";
export { type FenceReading, fenceProblem, type LedgerFence } from "./ledger-fence.ts";
export {
  decideLogEpoch,
  type EpochDecision,
  type LedgerEpoch,
  type LedgerLogState,
  type LogIdentity,
  type LogPartition,
  type LogState,
  type RefusalKind,
  type RefusedPartition,
} from "./log-epoch.ts";
export {
  ChainRecord,
  chainRecordKey,
  chainRecordOf,
  chainRecordsByHeight,
  chainTopicName,
  decodeChainRecord,
  encodeChainRecord,
} from "./chain-record.ts";
export {
  type ChainAppendDecision,
  type ChainEntry,
  type ChainTopicView,
  chainEntryOf,
  decideChainAppend,
} from "./chain-append.ts";
export {
  decodeTopicRecord,
  encodeTopicRecord,
  TopicRecord,
  topicRecordKey,
  topicsDueBefore,
  topicsInCreationOrder,
} from "./topic-record.ts";
export {
  checkpointKey,
  DeliveryCheckpoint,
  type DeliveredPosition,
  decodeSubscriptionEntry,
  encodeSubscriptionEntry,
  MAX_RECORDED_ENDINGS,
  recordedState,
  SubscriptionRecord,
  type SubscriptionState,
  subscriptionRecordKey,
  subscriptionStates,
  subscriptionsTopicName,
} from "./subscription-record.ts";
export { type Mount, parseMounts, type Variant, VARIANTS } from "./variant.ts";
export { childLogger, errorMessage, type Logger, silentLogger } from "./logger.ts";
export { decodeLogRecord, decodeReceipts, encodeLogRecord, LogRecord, logTopicName, Receipt } from "./log-record.ts";
export { checkPattern, type MatchRule, matchesPattern, splitLevels, TopicTrie } from "./topic-pattern.ts";
export { AddressPolicy, type Cidr, parseCidrList, restrictedReason } from "./address-policy.ts";
export {
  applySettingsChange,
  callbackSpacingMs,
  DEFAULT_SETTINGS,
  generateSigningSecret,
  isDefaultSettings,
  isEmptyChange,
  parseSettingsChange,
  type SettingsChange,
  SubscriptionSettings,
  signingSecretsAt,
} from "./subscription-settings.ts";
export { parseSigningSecret, signWebhook, verifyWebhook, type WebhookBody, WEBHOOK_TOLERANCE_SEC } from "./webhook-signature.ts";
export {
  type AlertState,
  type AlertTransition,
  alertBody,
  alertTransition,
  alertWebhookId,
  type DeliveryOutcome,
  isAlertUrl,
  mayRaiseAlert,
  OWNER_ALERT_TYPES,
  type OwnerAlert,
  type OwnerAlertType,
} from "./owner-alerts.ts";
export { redisKeys } from "./redis-keys.ts";
export { BlockNudge, parseHint, ReceiptMessage, WakeMessage } from "./hint-messages.ts";
export { type BestEffortOptions, bestEffort } from "./best-effort.ts";
export { TIMED_OUT, withTimeout } from "./with-timeout.ts";
export {
  type CallbackBody,
  callbackBody,
  callbackBodySchema,
  type EventChainFields,
  type EventSource,
  eventPlus,
  type WireEvent,
  wireEvent,
  wireEventSchema,
} from "./wire-event.ts";
export { decideSubscribe, type ExistingSubscription, type SubscribeAsk, type SubscribeDecision } from "./subscribe-decision.ts";
export { END_OF_BLOCK, type LedgerPosition } from "./ledger-position.ts";
export { caughtUp, type DispatchLimits, type DispatchPlan, type LedgerEvent, type MatchedRows, planDispatch } from "./dispatch-plan.ts";
export {
  TEST_DELIVERY_HEADER,
  TestDeliveryRequest,
  TestDeliveryResult,
  testEvent,
  testEventId,
} from "./test-delivery.ts";
export { customHeadersOf, parseCustomHeaders, shownHeaderNames } from "./custom-headers.ts";
export { type BodyMode, callbackPayload } from "./callback-payload.ts";
export { type ContentFilter, matchesContentFilter, parseContentFilter } from "./content-filter.ts";
