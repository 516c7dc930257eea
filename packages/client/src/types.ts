import type { z } from "zod";
import type {
  adminPageSchema,
  blockchainInfoSchema,
  blockRecordSchema,
  contractContextSchema,
  deadLetterSchema,
  deliveryAttemptSchema,
  eventDeliverySchema,
  groupGeneralSchema,
  listedEventFieldsSchema,
  nodeRecordSchema,
  resendReceiptSchema,
  sendResultSchema,
  batchItemResultSchema,
  subscriptionRecordESchema,
  subscriptionRecordSchema,
  subscriptionSettingsSchema,
  topicInfoESchema,
  topicPageSchema,
  topicStateLSchema,
  topicStateMSchema,
  transactionRecordSchema,
  versionInfoSchema,
} from "./reply-schemas.ts";

// The replies are inferred from the schemas the gateway's OpenAPI document describes them with
// (reply-schemas.ts); written out here are only the wire Event and callback body (copies of the
// broker's, see BrokerEvent) and what a client sends (settings).

/** The broker's interface variants: L (latest), M (middle), E (earliest). */
export type Variant = "L" | "M" | "E";

/** TopicInfo / TopicState of variant E: the four TopicInfo fields, with the contract address. */
export type TopicInfoE = z.infer<typeof topicInfoESchema>;

/** TopicState / TopicInfo of variant M. */
export type TopicStateM = z.infer<typeof topicStateMSchema>;

/** TopicState / TopicInfo of variant L: M's, with the last event's time (epoch ms, 0 if none). */
export type TopicStateL = z.infer<typeof topicStateLSchema>;

export type TopicStateOf<V extends Variant> = V extends "L" ? TopicStateL : V extends "M" ? TopicStateM : TopicInfoE;

/** rest/list's page; `pageSize`: M, L: items on this page; E: the requested size. */
export type TopicPage<T> = z.infer<ReturnType<typeof topicPageSchema<z.ZodType<T>>>>;

/** publish's reply. Only SUCCESS promises the event is stored; TIMEOUT means it may still land. */
export type SendResult = z.infer<typeof sendResultSchema>;

/** One event's answer in publishMany: its SendResult, or the broker error `{code, message}` that refused it alone. */
export type BatchItemResult = z.infer<typeof batchItemResultSchema>;

/**
 * An event as getEvent returns it and a callback carries it; `content` is Base64. E has no
 * `extensions`; L adds `event-plus` (a JSON string). The broker's `WireEvent`
 * (packages/domain/src/wire-event.ts), copied since this package depends on nothing of ours;
 * test/client/wire-types.test.ts fails the typecheck when the two differ.
 */
export interface BrokerEvent {
  topic: string;
  content: string;
  extensions?: Record<string, string>;
  eventId: string;
}

export type VersionInfo = z.infer<typeof versionInfoSchema>;

export type GroupGeneral = z.infer<typeof groupGeneralSchema>;

export type AdminPage<T> = z.infer<ReturnType<typeof adminPageSchema<z.ZodType<T>>>>;

export type TransactionRecord = z.infer<typeof transactionRecordSchema>;

export type BlockRecord = z.infer<typeof blockRecordSchema>;

/** A chain node; `nodeActive` is 1 while the node is alive, else 0. */
export type NodeRecord = z.infer<typeof nodeRecordSchema>;

/** A subscription as E lists it; counters are decimal strings, timestamps `yyyy-MM-dd HH:mm:ss`. */
export type SubscriptionRecordE = z.infer<typeof subscriptionRecordESchema>;

/** A subscription as L and M list it. */
export type SubscriptionRecord = z.infer<typeof subscriptionRecordSchema>;

/**
 * A dead-lettered subscription (admin/deadLetters): its delivery is suspended, the backlog kept.
 * `eventId`: the event that used up its retry budget, null if the backlog is empty;
 * `notifyingEventCount`: events waiting, the head included (a decimal string).
 */
export type DeadLetter = z.infer<typeof deadLetterSchema>;

export type ContractContext = z.infer<typeof contractContextSchema>;

/** `nodeIpList` holds `[ip:port]` entries. */
export type BlockchainInfo = z.infer<typeof blockchainInfoSchema>;

/** The body the broker POSTs to a callback URL (the broker's `CallbackBody`, held equal to it as `BrokerEvent` is). */
export interface CallbackBody {
  subscriptionId: string;
  event: BrokerEvent;
}

/**
 * One recorded callback attempt (admin/deliveryAttempts, on brokers that keep the attempt log):
 * `attemptTimeStamp` (local `yyyy-MM-dd HH:mm:ss`) and `attemptTime` (epoch ms) of its start;
 * `httpStatus` null when no HTTP answer came back; `error` null when delivered; `excerpt` the
 * start of the receiver's answer body.
 */
export type DeliveryAttempt = z.infer<typeof deliveryAttemptSchema>;

/**
 * An event as admin/events lists it: the variant's Event with its block and seal time
 * (`eventTime` epoch ms, `eventTimeStamp` the same, local `yyyy-MM-dd HH:mm:ss`).
 */
export type ListedEvent = BrokerEvent & z.infer<typeof listedEventFieldsSchema>;

/** One live subscription whose topic or pattern matches an event, with the event's state there and every attempt at it. */
export type EventDelivery = z.infer<typeof eventDeliverySchema>;

/** Where an event stands for one subscription (admin/eventDeliveries). */
export type EventDeliveryState = EventDelivery["state"];

/** What admin/resendEvent answers: the resend's number (its `webhook-id` ends `_resend<n>`). */
export type ResendReceipt = z.infer<typeof resendReceiptSchema>;

/**
 * A subscription's own settings as admin/subscriptionSettings answers them; null values are the
 * broker's deployment-wide ones (`maxRate` null: no limit). `signing`: whose secrets sign its
 * callbacks; `previousSecretUntil`: epoch ms until which the secret before the last rotation
 * signs too; `alertUrl`: where alerts to the owner go. `secret` (`whsec_…`) only in the answer of
 * the rotation that made it: shown once, keep it.
 */
export type SubscriptionSettings = z.infer<typeof subscriptionSettingsSchema>;

/**
 * Settings a subscription may be given at subscribe time or later; null puts one back to the
 * deployment's. `alertUrl`: an http(s) URL that gets signed `subscription.failing`, `.suspended`
 * and `.recovered` alerts (null: none); its host must be one the broker's callback policy allows.
 */
export interface SettingsUpdate {
  maxRate?: number | null;
  retryMaxAttempts?: number | null;
  retryBaseMs?: number | null;
  retryMaxMs?: number | null;
  deliveryWindow?: number | null;
  paused?: boolean;
  alertUrl?: string | null;
}

/** What `subscriptionSettings` may change: the same settings as subscribe's (the alert URL too, since subscribe takes it). */
export type SettingsChange = SettingsUpdate;
