import { randomUUID } from "node:crypto";
import { type RetryOptions, retryPublish } from "./publish-retry.ts";
import { type CallOptions, type ClientOptions, type GroupCallOptions, type Params, Transport } from "./transport.ts";
import type {
  AdminPage,
  BatchItemResult,
  BlockRecord,
  BrokerEvent,
  DeadLetter,
  DeliveryAttempt,
  EventDelivery,
  GroupGeneral,
  ListedEvent,
  NodeRecord,
  ResendReceipt,
  SendResult,
  SettingsChange,
  SubscriptionSettings,
  TestDeliveryResult,
  TopicPage,
  TopicStateOf,
  TransactionRecord,
  Variant,
  VersionInfo,
} from "./types.ts";

export interface PublishOptions extends GroupCallOptions {
  /** Extensions; every key must start with `event-` (e.g. `event-format`). */
  extensions?: Record<string, string>;
  /**
   * Names the publish so that a retry (after a TIMEOUT or a lost reply) stores nothing twice: the
   * same key and content within the broker's retention answer the first event's SendResult; the
   * same key with other content is BrokerError 100211. 1 to 255 visible ASCII characters (else
   * 100210); sent as the `Idempotency-Key` header. Brokers without the feature ignore it.
   */
  idempotencyKey?: string;
}

/** One event of publishMany: publish's arguments as one object. */
export interface BatchEvent {
  topic: string;
  /** Text, at most 10240 UTF-16 code units; binary content goes as Base64 text (say so in an extension). */
  content: string;
  /** Keys start with `event-`. */
  extensions?: Record<string, string>;
  /** This event's own idempotency key (see PublishOptions.idempotencyKey). */
  idempotencyKey?: string;
}

/** The header rest/publish reads the idempotency key from (docs/idempotency.md). */
const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

export interface AdminPageQuery {
  /** Counted from 1. */
  pageNumber: number;
  pageSize: number;
}

/**
 * What admin/events looks for: a topic or `+`/`#` pattern, an eventId, or both ends of a time
 * range (the broker refuses a search nothing bounds with 100308). Times are epoch milliseconds or
 * `Date`s, compared with the seal time of the event's block.
 */
export interface EventSearch extends Partial<AdminPageQuery> {
  topic?: string;
  eventId?: string;
  from?: number | Date;
  to?: number | Date;
}

/** Where admin/replayDeadLetters replays a subscription from: a time (the first event sealed at or after it) or an event. */
export type ReplayFrom = { time: number | Date } | { eventId: string };

/** A settings update as request parameters: null is sent blank (the deployment's value again). */
export function settingsParams(u: SettingsChange = {}): Record<string, string | undefined> {
  const wire = (v: unknown) => (v === null ? "" : v === undefined ? undefined : typeof v === "object" ? JSON.stringify(v) : String(v));
  return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, wire(v)]));
}

const epochMs = (t: number | Date | undefined) => (t instanceof Date ? t.getTime() : t);

export interface BlockQuery extends AdminPageQuery {
  /** One block by height. */
  blockNumber?: number;
}

/**
 * The operations every variant has. Results are typed for the variant `V`; each method sends one
 * POST and resolves with the success payload, or rejects with BrokerError (the broker's code and
 * message) or BrokerTransportError (no broker reply).
 */
export abstract class VariantClient<V extends Variant> {
  abstract readonly variant: V;
  protected readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
  }

  /** Calls any operation by path (e.g. `admin/listGroup`); the escape hatch for extensions. */
  call(operation: string, params: Params = {}, opts?: CallOptions): Promise<unknown> {
    return this.transport.call(operation, params, opts);
  }

  protected withGroup(params: Params, opts?: GroupCallOptions): Params {
    return { ...params, groupId: opts?.groupId ?? this.transport.options.groupId };
  }

  /** Creates the topic if needed; true. */
  async open(topic: string, opts?: GroupCallOptions): Promise<boolean> {
    return (await this.call("rest/open", this.withGroup({ topic }, opts), opts)) as boolean;
  }

  /** Only checks that the topic exists (100101 otherwise), as the original did; true. */
  async close(topic: string, opts?: GroupCallOptions): Promise<boolean> {
    return (await this.call("rest/close", this.withGroup({ topic }, opts), opts)) as boolean;
  }

  async exist(topic: string, opts?: GroupCallOptions): Promise<boolean> {
    return (await this.call("rest/exist", this.withGroup({ topic }, opts), opts)) as boolean;
  }

  async state(topic: string, opts?: GroupCallOptions): Promise<TopicStateOf<V>> {
    return (await this.call("rest/state", this.withGroup({ topic }, opts), opts)) as TopicStateOf<V>;
  }

  /** Topics in creation order; `pageIndex` from 0, `pageSize` 1–100. */
  async list(page: { pageIndex: number; pageSize: number }, opts?: GroupCallOptions): Promise<TopicPage<TopicStateOf<V>>> {
    return (await this.call("rest/list", this.withGroup({ ...page }, opts), opts)) as TopicPage<TopicStateOf<V>>;
  }

  /** Publishes one event; resolves once the broker answers (SUCCESS: sealed in a block). */
  async publish(topic: string, content: string, opts?: PublishOptions): Promise<SendResult> {
    const params: Params = this.withGroup({ topic, content }, opts);
    for (const [k, v] of Object.entries(opts?.extensions ?? {})) params[k] = v;
    const headers: Record<string, string> = {};
    if (opts?.idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER] = opts.idempotencyKey;
    return (await this.transport.call("rest/publish", params, opts, headers)) as SendResult;
  }

  /**
   * Publishes one event and, while its outcome is unknown (a TIMEOUT answer, E's 200202, no
   * connection, no answer in time), sends it again under the same idempotency key, so that it is
   * stored once however many tries reached the broker. `idempotencyKey` defaults to a fresh UUID;
   * pass your own to make retries across process restarts safe too. Resolves with the last answer
   * (SUCCESS, or TIMEOUT once `attempts` are spent) or rejects with the last error.
   */
  async publishWithRetry(topic: string, content: string, opts?: PublishOptions & RetryOptions): Promise<SendResult> {
    const keyed = { ...opts, idempotencyKey: opts?.idempotencyKey ?? randomUUID() };
    return retryPublish(() => this.publish(topic, content, keyed), opts);
  }

  /**
   * Publishes up to 1000 events in one request (rest/publishBatch), in their order (events of one
   * topic keep it in the ledger); resolves once each is sealed or timed out, with one result per
   * event in the same order: its SendResult, or `{code, message}` when the broker refused that
   * event alone (e.g. 100101, topic not exist). A batch refused whole (100212 its shape or size,
   * 100213 over the body limit, an unknown group) rejects with a BrokerError. Each event counts
   * against an API key's publish rate.
   */
  async publishMany(events: readonly BatchEvent[], opts?: GroupCallOptions): Promise<BatchItemResult[]> {
    const groupId = opts?.groupId ?? this.transport.options.groupId;
    const body = { ...(groupId !== undefined ? { groupId } : {}), events };
    return (await this.transport.callJson("rest/publishBatch", body, opts)) as BatchItemResult[];
  }

  async getEvent(eventId: string, opts?: GroupCallOptions): Promise<BrokerEvent> {
    return (await this.call("rest/getEvent", this.withGroup({ eventId }, opts), opts)) as BrokerEvent;
  }

  async listGroup(opts?: CallOptions): Promise<string[]> {
    return (await this.call("admin/listGroup", {}, opts)) as string[];
  }

  /** Gateway instances as `ip:port`. */
  async listNodes(opts?: CallOptions): Promise<string[]> {
    return (await this.call("admin/listNodes", {}, opts)) as string[];
  }

  async getVersion(opts?: CallOptions): Promise<VersionInfo> {
    return (await this.call("admin/getVersion", {}, opts)) as VersionInfo;
  }

  async groupGeneral(opts?: GroupCallOptions): Promise<GroupGeneral> {
    return (await this.call("admin/group/general", this.withGroup({}, opts), opts)) as GroupGeneral;
  }

  /** Transactions of one block (the latest unless `blockNumber` or `transactionHash`, a block hash, names one). */
  async transList(q: BlockQuery & { transactionHash?: string }, opts?: GroupCallOptions): Promise<AdminPage<TransactionRecord>> {
    return (await this.call("admin/transaction/transList", this.withGroup({ ...q }, opts), opts)) as AdminPage<TransactionRecord>;
  }

  /** Blocks, newest first within the page, or the one block `blockNumber` or `pkHash` names. */
  async blockList(q: BlockQuery & { pkHash?: string }, opts?: GroupCallOptions): Promise<AdminPage<BlockRecord>> {
    return (await this.call("admin/block/blockList", this.withGroup({ ...q }, opts), opts)) as AdminPage<BlockRecord>;
  }

  /** Every chain node (indexer) of the group; the paging parameters are echoed, not applied. */
  async nodeList(q: AdminPageQuery, opts?: GroupCallOptions): Promise<AdminPage<NodeRecord>> {
    return (await this.call("admin/node/nodeList", this.withGroup({ ...q }, opts), opts)) as AdminPage<NodeRecord>;
  }

  /** Subscriptions whose delivery is suspended after the retry budget ran out. */
  async deadLetters(opts?: GroupCallOptions): Promise<DeadLetter[]> {
    return (await this.call("admin/deadLetters", this.withGroup({}, opts), opts)) as DeadLetter[];
  }

  /**
   * A subscription's recorded callback attempts, newest first (admin/deliveryAttempts). Brokers
   * without the attempt log answer as for an unknown path: BrokerError 200203 (M, E) or a
   * BrokerTransportError with status 404 (L).
   */
  async deliveryAttempts(subscriptionId: string, page?: Partial<AdminPageQuery>, opts?: CallOptions): Promise<AdminPage<DeliveryAttempt>> {
    return (await this.call("admin/deliveryAttempts", { subscriptionId, ...page }, opts)) as AdminPage<DeliveryAttempt>;
  }

  /** Resumes one dead-lettered subscription, or all of them without an id; the ids released. */
  async replayDeadLetters(subscriptionId?: string, opts?: CallOptions): Promise<string[]> {
    return (await this.call("admin/replayDeadLetters", { subscriptionId }, opts)) as string[];
  }

  /**
   * Replays a live subscription from a time or an event (admin/replayDeadLetters with `fromTime`
   * or `fromEventId`): every event from there on is delivered again, in order; a position past
   * what it was delivered moves nothing. Resolves with `[subscriptionId]`.
   */
  async replayFrom(subscriptionId: string, from: ReplayFrom, opts?: CallOptions): Promise<string[]> {
    const position = "eventId" in from ? { fromEventId: from.eventId } : { fromTime: epochMs(from.time) };
    return (await this.call("admin/replayDeadLetters", { subscriptionId, ...position }, opts)) as string[];
  }

  /** Events of the group by topic or pattern, time range and eventId, with their content, newest first (admin/events). */
  async events(q: EventSearch, opts?: GroupCallOptions): Promise<AdminPage<ListedEvent>> {
    const params = { ...q, from: epochMs(q.from), to: epochMs(q.to) };
    return (await this.call("admin/events", this.withGroup(params, opts), opts)) as AdminPage<ListedEvent>;
  }

  /** For one event: each live subscription its topic matches, where the event stands there, and every attempt (admin/eventDeliveries). */
  async eventDeliveries(eventId: string, page?: Partial<AdminPageQuery>, opts?: GroupCallOptions): Promise<AdminPage<EventDelivery>> {
    return (await this.call("admin/eventDeliveries", this.withGroup({ eventId, ...page }, opts), opts)) as AdminPage<EventDelivery>;
  }

  /**
   * Sends one event again to one subscription (admin/resendEvent): out of order, marked
   * `webhook-resend: true`, through the broker's normal delivery (signed, retried, logged).
   */
  async resendEvent(subscriptionId: string, eventId: string, opts?: CallOptions): Promise<ResendReceipt> {
    return (await this.call("admin/resendEvent", { subscriptionId, eventId }, opts)) as ResendReceipt;
  }

  /**
   * A subscription's own settings (admin/subscriptionSettings), or, with `update`, changes them
   * and resolves with them as they are then. With API keys, the owning key or an admin key only.
   */
  async subscriptionSettings(subscriptionId: string, update?: SettingsChange, opts?: CallOptions): Promise<SubscriptionSettings> {
    return (await this.call("admin/subscriptionSettings", { subscriptionId, ...settingsParams(update) }, opts)) as SubscriptionSettings;
  }

  /**
   * Gives the subscription a new signing secret of its own, in `secret` of the answer (shown this
   * once); the previous one keeps signing beside it for `graceMs` (the broker's default: a day).
   */
  async rotateSigningSecret(subscriptionId: string, graceMs?: number, opts?: CallOptions): Promise<SubscriptionSettings> {
    const params = { subscriptionId, rotateSecret: "true", secretGraceMs: graceMs === undefined ? undefined : String(graceMs) };
    return (await this.call("admin/subscriptionSettings", params, opts)) as SubscriptionSettings;
  }

  /** Sends one marked test callback (`webhook-test: true`, no ledger event) to the subscription's receiver and answers how it went (admin/testDelivery). */
  async testDelivery(subscriptionId: string, opts?: CallOptions): Promise<TestDeliveryResult> {
    return (await this.call("admin/testDelivery", { subscriptionId }, opts)) as TestDeliveryResult;
  }

  /**
   * Drops the subscription's own signing secrets (admin/subscriptionSettings `dropSecret`): it
   * signs with the deployment's WEBHOOK_SECRETS again, at once.
   */
  async dropSigningSecret(subscriptionId: string, opts?: CallOptions): Promise<SubscriptionSettings> {
    return (await this.call("admin/subscriptionSettings", { subscriptionId, dropSecret: "true" }, opts)) as SubscriptionSettings;
  }
}
