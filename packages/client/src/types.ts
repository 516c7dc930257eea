// Written out by hand, since the client has no runtime dependency: the gateway's OpenAPI document
// describes the replies with zod schemas (services/gateway/src/openapi/reply-schemas.ts), and
// test/client/reply-types.test.ts fails the typecheck when a type here and the schema's differ.
// The wire Event and callback body are copies of the broker's (see BrokerEvent).

/** The broker's interface variants: L (latest), M (middle), E (earliest). */
export type Variant = "L" | "M" | "E";

/** TopicInfo / TopicState of variant E: the four TopicInfo fields, with the contract address. */
export interface TopicInfoE {
  topicName: string;
  topicAddress: string | null;
  senderAddress: string;
  /** Epoch milliseconds. */
  createdTimestamp: number;
}

/** TopicState / TopicInfo of variant M. */
export interface TopicStateM {
  topicName: string;
  topicAddress: null;
  senderAddress: string;
  /** Epoch milliseconds. */
  createdTimestamp: number;
  /** Events published to the topic. */
  sequenceNumber: number;
  /** Block of the last event, 0 if none. */
  blockNumber: number;
}

/** TopicState / TopicInfo of variant L: M's, with the last event's time (epoch ms, 0 if none). */
export interface TopicStateL extends TopicStateM {
  lastTimestamp: number;
  lastSender: null;
  lastBlock: null;
}

export type TopicStateOf<V extends Variant> = V extends "L" ? TopicStateL : V extends "M" ? TopicStateM : TopicInfoE;

/** rest/list's page; `pageSize`: M, L: items on this page; E: the requested size. */
export interface TopicPage<T> {
  total: number;
  pageIndex: number;
  pageSize: number;
  topicInfoList: T[];
}

/** publish's reply. Only SUCCESS promises the event is stored; TIMEOUT means it may still land. */
export interface SendResult {
  status: "SUCCESS" | "TIMEOUT" | "ERROR" | "NO_PERMISSION";
  topic: string | null;
  /** Set with SUCCESS only. */
  eventId: string | null;
}

/** One event's answer in publishMany: its SendResult, or the broker error `{code, message}` that refused it alone. */
export type BatchItemResult = SendResult | { code: number; message: string | null };

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

/** admin/getVersion ('' when unknown). */
export interface VersionInfo {
  eventVersion: string;
  gitCommitTimeStamp: string;
  gitBranch: string;
  gitCommitHash: string;
}

export interface GroupGeneral {
  nodeCount: number;
  transactionCount: number;
  latestBlock: number;
}

/** One page of an admin listing (transList, blockList, nodeList, deliveryAttempts, events). */
export interface AdminPage<T> {
  total: number;
  pageIndex: number | null;
  pageSize: number | null;
  pageData: T[];
}

/** `blockTimestamp`: local `yyyy-MM-dd HH:mm:ss`. */
export interface TransactionRecord {
  transHash: string;
  transFrom: string;
  transTo: string;
  blockNumber: number;
  blockTimestamp: string;
  createTime: null;
  modifyTime: null;
}

/** `sealer`: `sealerIndex` in hex; `blockTimestamp`: local `yyyy-MM-dd HH:mm:ss`. */
export interface BlockRecord {
  pkHash: string;
  blockNumber: number;
  blockTimestamp: string;
  transCount: number;
  sealerIndex: number;
  sealer: string;
  createTime: null;
  modifyTime: null;
}

/** A chain node; `nodeActive` is 1 while the node is alive, else 0. */
export interface NodeRecord {
  nodeId: string;
  nodeName: null;
  nodeType: "sealer";
  blockNumber: number | null;
  pbftView: null;
  nodeActive: 0 | 1;
  createTime: null;
  modifyTime: null;
}

/** A subscription as E lists it; counters are decimal strings, timestamps `yyyy-MM-dd HH:mm:ss`. */
export interface SubscriptionRecordE {
  /** `restful` for callback subscriptions. */
  interfaceType: string;
  /** Events delivered. */
  notifiedEventCount: string;
  /** Events waiting. */
  notifyingEventCount: string;
  notifyTimeStamp: string;
  /** Topic or pattern. */
  topicName: string;
  subscribeId: string;
}

/** A subscription as L and M list it. */
export interface SubscriptionRecord extends SubscriptionRecordE {
  remoteIp: string;
  createTimeStamp: string;
  groupId: string;
}

/**
 * A dead-lettered subscription (admin/deadLetters): its delivery is suspended, the backlog kept.
 * `eventId`: the event that used up its retry budget, null if the backlog is empty;
 * `notifyingEventCount`: events waiting, the head included (a decimal string).
 */
export interface DeadLetter {
  subscriptionId: string;
  topicName: string;
  groupId: string;
  url: string;
  nodeInstance: string;
  eventId: string | null;
  attempts: number;
  lastError: string | null;
  deadTimeStamp: string;
  notifyingEventCount: string;
}

export interface ContractContext {
  chainId: string;
  blockNumber: number;
  blockLimit: number;
  topicAddress: string;
  gasLimit: number;
  gasPrice: number;
}

/** `nodeIpList` holds `[ip:port]` entries. */
export interface BlockchainInfo {
  blockNumber: number;
  nodeIdList: string[];
  nodeIpList: string[];
}

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
export interface DeliveryAttempt extends DeliveryAttemptFields {
  eventId: string;
}

/** One attempt as admin/eventDeliveries lists it (the event is the listing's). */
interface DeliveryAttemptFields {
  attemptTimeStamp: string;
  attemptTime: number;
  durationMs: number;
  delivered: boolean;
  httpStatus: number | null;
  error: string | null;
  excerpt: string | null;
}

/**
 * An event as admin/events lists it: the variant's Event with its block and seal time
 * (`eventTime` epoch ms, `eventTimeStamp` the same, local `yyyy-MM-dd HH:mm:ss`).
 */
export interface ListedEvent extends BrokerEvent {
  blockNumber: number;
  eventTime: number;
  eventTimeStamp: string;
}

/** One live subscription whose topic or pattern matches an event, with the event's state there and every attempt at it. */
export interface EventDelivery {
  subscriptionId: string;
  /** The subscription's topic or pattern. */
  topicName: string;
  /** Whole only to the API key that owns the subscription. */
  url: string;
  state: EventDeliveryState;
  /** admin/resendEvent requests of this event not yet answered 2xx. */
  resendsWaiting: number;
  /** Every attempt at this event the log keeps, newest first (resends included). */
  attempts: DeliveryAttemptFields[];
}

/** Where an event stands for one subscription (admin/eventDeliveries). */
export type EventDeliveryState = "delivered" | "pending" | "dead-lettered" | "before-start";

/** What admin/resendEvent answers: the resend's number (its `webhook-id` ends `_resend<n>`). */
export interface ResendReceipt {
  subscriptionId: string;
  eventId: string;
  resend: number;
}

/**
 * A subscription's own settings as admin/subscriptionSettings answers them; null values are the
 * broker's deployment-wide ones (`maxRate` null: no limit). `signing`: whose secrets sign its
 * callbacks; `previousSecretUntil`: epoch ms until which the secret before the last rotation
 * signs too; `alertUrl`: where alerts to the owner go. `secret` (`whsec_…`) only in the answer of
 * the rotation that made it: shown once, keep it.
 */
export interface SubscriptionSettings {
  subscriptionId: string;
  paused: boolean;
  pausedTimeStamp: string | null;
  maxRate: number | null;
  retryMaxAttempts: number | null;
  retryBaseMs: number | null;
  retryMaxMs: number | null;
  deliveryWindow: number | null;
  signing: "deployment" | "own";
  previousSecretUntil: number | null;
  alertUrl: string | null;
  /** The names of its custom headers (values are never shown); null: none. */
  headers: string[] | null;
  /** Its content filter, the conditions as given; null: every event of its topic. */
  filter: Record<string, unknown>[] | null;
  /** envelope: the original's callback body; raw: the published content as the body. */
  bodyMode: "envelope" | "raw";
  secret?: string;
}

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
  /** `raw`: the published content as the callback body, its metadata in `evb-*` headers; null: the envelope again. */
  bodyMode?: "envelope" | "raw" | null;
  /** Conditions on the published JSON that must all hold (`{ path, equals }`, `{ path, in }`, `{ path, exists }`); null: none. */
  filter?: ContentCondition[] | null;
}

/** One condition of a content filter: a dotted path of the published JSON and what it must be. */
export type ContentCondition =
  | { path: string; equals: string | number | boolean | null }
  | { path: string; in: (string | number | boolean | null)[] }
  | { path: string; exists: boolean };

/**
 * What `subscriptionSettings` may change: subscribe's settings, and the signing secret.
 * `rotateSecret`: a new secret of the subscription's own, in `secret` of the answer this once,
 * the previous one signing beside it for `secretGraceMs` (the broker's default: a day);
 * `dropSecret`: sign with the deployment's secrets again (`rotateSigningSecret` and
 * `dropSigningSecret` do these alone).
 */
export interface SettingsChange extends SettingsUpdate {
  rotateSecret?: boolean;
  secretGraceMs?: number;
  dropSecret?: boolean;
  /** Headers sent with every callback (stored encrypted, shown by name only); null or {}: none. */
  headers?: Record<string, string> | null;
}

/** What `testDelivery` answers: how the receiver took one marked test callback. */
export interface TestDeliveryResult {
  subscriptionId: string;
  /** `test_<uuid>`: never a ledger event's id. */
  eventId: string;
  delivered: boolean;
  httpStatus: number | null;
  durationMs: number;
  error: string | null;
  excerpt: string | null;
}
