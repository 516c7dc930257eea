import type { z } from "zod";
import type {
  adminPageSchema,
  blockchainInfoSchema,
  blockRecordSchema,
  contractContextSchema,
  groupGeneralSchema,
  nodeRecordSchema,
  sendResultSchema,
  topicInfoESchema,
  topicPageSchema,
  topicStateLSchema,
  topicStateMSchema,
  transactionRecordSchema,
  versionInfoSchema,
} from "./reply-schemas.ts";

// The replies the gateway's OpenAPI document describes with the same schemas are inferred from
// them (reply-schemas.ts); the rest are written out here.

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
export interface SubscriptionRecordE {
  interfaceType: string;
  notifiedEventCount: string;
  notifyingEventCount: string;
  notifyTimeStamp: string;
  topicName: string;
  subscribeId: string;
}

/** A subscription as L and M list it. */
export interface SubscriptionRecord extends SubscriptionRecordE {
  remoteIp: string;
  createTimeStamp: string;
  groupId: string;
}

/** A dead-lettered subscription (admin/deadLetters): its delivery is suspended, the backlog kept. */
export interface DeadLetter {
  subscriptionId: string;
  topicName: string;
  groupId: string;
  url: string;
  nodeInstance: string;
  /** The event that used up its retry budget, null if the backlog is empty. */
  eventId: string | null;
  attempts: number;
  lastError: string | null;
  deadTimeStamp: string;
  /** Events waiting behind it, decimal string. */
  notifyingEventCount: string;
}

export type ContractContext = z.infer<typeof contractContextSchema>;

/** `nodeIpList` holds `[ip:port]` entries. */
export type BlockchainInfo = z.infer<typeof blockchainInfoSchema>;

/** The body the broker POSTs to a callback URL (the broker's `CallbackBody`, held equal to it as `BrokerEvent` is). */
export interface CallbackBody {
  subscriptionId: string;
  event: BrokerEvent;
}

/** One recorded callback attempt (admin/deliveryAttempts, on brokers that keep the attempt log). */
export interface DeliveryAttempt {
  eventId: string;
  /** Local `yyyy-MM-dd HH:mm:ss` of the attempt's start. */
  attemptTimeStamp: string;
  /** Epoch milliseconds of the attempt's start. */
  attemptTime: number;
  durationMs: number;
  delivered: boolean;
  /** Null when no HTTP answer came back (timeout, refused connection). */
  httpStatus: number | null;
  /** Null when delivered. */
  error: string | null;
  /** The start of the receiver's answer body. */
  excerpt: string | null;
}

/** An event as admin/events lists it: the variant's Event with its block and seal time. */
export interface ListedEvent extends BrokerEvent {
  blockNumber: number;
  /** Epoch milliseconds when its block was sealed. */
  eventTime: number;
  /** The same, local `yyyy-MM-dd HH:mm:ss`. */
  eventTimeStamp: string;
}

/** Where an event stands for one subscription (admin/eventDeliveries). */
export type EventDeliveryState = "delivered" | "pending" | "dead-lettered" | "before-start";

/** One live subscription whose topic or pattern matches an event, with the event's state there and every attempt at it. */
export interface EventDelivery {
  subscriptionId: string;
  topicName: string;
  url: string;
  state: EventDeliveryState;
  /** admin/resendEvent requests of the event not yet answered 2xx. */
  resendsWaiting: number;
  attempts: Omit<DeliveryAttempt, "eventId">[];
}

/** What admin/resendEvent answers: the resend's number (its `webhook-id` ends `_resend<n>`). */
export interface ResendReceipt {
  subscriptionId: string;
  eventId: string;
  resend: number;
}

/**
 * A subscription's own settings as admin/subscriptionSettings answers them; null values are the
 * broker's deployment-wide ones. `secret` only in the answer of the rotation that made it.
 */
export interface SubscriptionSettings {
  subscriptionId: string;
  paused: boolean;
  pausedTimeStamp: string | null;
  /** Callbacks per second at most; null: no limit. */
  maxRate: number | null;
  retryMaxAttempts: number | null;
  retryBaseMs: number | null;
  retryMaxMs: number | null;
  deliveryWindow: number | null;
  /** Whose secrets sign its callbacks: the deployment's, or its own. */
  signing: "deployment" | "own";
  /** Epoch ms until which the secret before the last rotation signs too; null when none does. */
  previousSecretUntil: number | null;
  /** Where alerts to the owner go (`subscription.failing`, `.suspended`, `.recovered`); null: none. */
  alertUrl: string | null;
  /** The new signing secret (`whsec_…`): shown once, keep it. */
  secret?: string;
}

/** Settings a subscription may be given at subscribe time or later; null puts one back to the deployment's. */
export interface SettingsUpdate {
  maxRate?: number | null;
  retryMaxAttempts?: number | null;
  retryBaseMs?: number | null;
  retryMaxMs?: number | null;
  deliveryWindow?: number | null;
  paused?: boolean;
}

/**
 * What `subscriptionSettings` may change beyond subscribe's settings: the alert URL (an http(s)
 * URL that gets signed `subscription.failing`, `.suspended` and `.recovered` alerts; null: none).
 */
export interface SettingsChange extends SettingsUpdate {
  alertUrl?: string | null;
}
