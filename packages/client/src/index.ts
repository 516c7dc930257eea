export { BrokerClientE, BrokerClientL, BrokerClientM, type BrokerClient, createClient, type SubscribeOptions } from "./clients.ts";
export { decodeContent, decodeContentBytes } from "./content.ts";
export { BrokerError, BrokerTransportError, type TransportFailure } from "./errors.ts";
export { outcomeUnknown, type RetryOptions } from "./publish-retry.ts";
export type { CallOptions, ClientOptions, GroupCallOptions } from "./transport.ts";
export type {
  AdminPage,
  BlockchainInfo,
  BlockRecord,
  BrokerEvent,
  CallbackBody,
  ContentCondition,
  ContractContext,
  DeadLetter,
  DeliveryAttempt,
  EventDelivery,
  EventDeliveryState,
  GroupGeneral,
  ListedEvent,
  NodeRecord,
  ResendReceipt,
  BatchItemResult,
  SendResult,
  SettingsChange,
  SettingsUpdate,
  SubscriptionRecord,
  SubscriptionRecordE,
  TopicInfoE,
  TopicPage,
  TopicStateL,
  TopicStateM,
  TopicStateOf,
  TransactionRecord,
  SubscriptionSettings,
  TestDeliveryResult,
  Variant,
  VersionInfo,
} from "./types.ts";
export type { AdminPageQuery, BatchEvent, BlockQuery, EventSearch, PublishOptions, ReplayFrom } from "./variant-client.ts";
export { type HeaderSource, type VerifyWebhookOptions, type VerifyWebhookResult, verifyWebhook } from "./verify-webhook.ts";
