export { BrokerClientE, BrokerClientL, BrokerClientM, type BrokerClient, createClient, type SubscribeOptions } from "./clients.ts";
export { BrokerError, BrokerTransportError, type TransportFailure } from "./errors.ts";
export type { CallOptions, ClientOptions, GroupCallOptions } from "./transport.ts";
export type {
  AdminPage,
  BlockchainInfo,
  BlockRecord,
  BrokerEvent,
  CallbackBody,
  ContractContext,
  DeadLetter,
  DeliveryAttempt,
  GroupGeneral,
  NodeRecord,
  SendResult,
  SubscriptionRecord,
  SubscriptionRecordE,
  TopicInfoE,
  TopicPage,
  TopicStateL,
  TopicStateM,
  TopicStateOf,
  TransactionRecord,
  Variant,
  VersionInfo,
} from "./types.ts";
export type { AdminPageQuery, BlockQuery, PublishOptions } from "./variant-client.ts";
export { type HeaderSource, type VerifyWebhookOptions, type VerifyWebhookResult, verifyWebhook } from "./verify-webhook.ts";

/** The text of an event's Base64 `content` (the broker stores the published text as UTF-8). */
export function decodeContent(event: { content: string }): string {
  return new TextDecoder().decode(Uint8Array.from(atob(event.content), (c) => c.charCodeAt(0)));
}
