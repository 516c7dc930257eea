import { currentRequestId } from "@evb/runtime";
import type { RecordHeaders } from "@evb/eventlog";
import { tracingOn } from "@evb/telemetry";
import {
  BrokerError,
  certainlyNotWritten,
  checkContent,
  checkExtensions,
  checkTopicName,
  DEFAULT_IDEMPOTENCY_RETENTION_MS,
  encodeLogRecord,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_PARAM,
  idempotencyKeyOf,
  isBlank,
  type LogRecord,
  type Logger,
  logTopicName,
  NEUTRAL_SPELLING,
  scopedIdempotencyKey,
  senderAddress,
  type Spelling,
  type Variant,
} from "@evb/domain";
import { ownerId } from "../http/caller-address.ts";
import { groupFromValue } from "../http/group.ts";
import type { Operation, OperationAccess, OperationContext } from "../http/operation.ts";
import { bare } from "../http/replies.ts";
import { topicStorageFailure } from "../http/storage-failures.ts";
import { tracedAppend } from "./publish-trace.ts";
import type { ReceiptInbox } from "./receipt-waiter.ts";

/** The topic port (`TopicStore` in main.ts): does the group have this topic? */
export interface TopicCatalog {
  exists(groupId: string, topic: string): Promise<boolean>;
}

/** The log port (`EventLogWriter`): append one record to a Kafka topic, resolved once the brokers acknowledge it. */
export interface EventLog {
  /** `headers`: the record's Kafka headers (its `traceparent` when tracing is on). */
  append(topic: string, key: string, value: Buffer, headers?: RecordHeaders): Promise<void>;
}

export interface PublishDeps {
  topics: TopicCatalog;
  groups: ReadonlySet<string>;
  log: EventLog;
  receipts: ReceiptInbox;
  gatewayId: string;
  kafkaTopicPrefix: string;
  publishTimeoutMs: number;
  now: () => number;
  logger: Logger;
  /** How long a publish's Idempotency-Key counts from its event's seal (IDEMPOTENCY_RETENTION_MS); carried in its record. */
  idempotencyRetentionMs?: number;
  /** Told each publish that reached the log: its group, outcome and seconds from arrival to answer (metrics). */
  observe?: (group: string, outcome: "SUCCESS" | "TIMEOUT" | "ERROR", seconds: number) => void;
  /** rest/publish: which parameters are extensions (BRAND); absent: the neutral `event-` ones. */
  spelling?: Spelling;
}

function sendResult(status: string, topic: string | null, eventId: string | null) {
  return { status, topic, eventId };
}

/** Not confirmed in time: TIMEOUT in L and M; E answered 200202 instead (behaviour.md 7.3). */
function timedOut(variant: Variant, topic: string) {
  if (variant === "E") throw BrokerError.of("TRANSACTION_FAILED");
  return bare(sendResult("TIMEOUT", topic, null));
}

/**
 * The parameters named with this deployment's extension prefix (`event-*`, or `weevent-*` under
 * BRAND=weevent), first value of each, stored under the name sent (behaviour.md 1.2, 7.2); or
 * the map a JSON-RPC publish gave, whatever its keys (checkEvent refuses one without the prefix).
 */
function collectExtensions(ctx: OperationContext, spelling: Spelling): Record<string, string> {
  if (ctx.params.extensions) return { ...ctx.params.extensions };
  const ext: Record<string, string> = {};
  for (const [name, values] of ctx.params.raw) {
    if (spelling.isParameterExtension(name)) ext[name] = values[0] ?? "";
  }
  return ext;
}

/**
 * The checks every way in makes of an event after its group (behaviour.md 7.1 steps 3–7): topic
 * name, content, extension keys (100206 in the deployment's spelling), extensions' length.
 */
export function checkEvent(
  topic: string,
  content: string,
  extensions: Record<string, string>,
  spelling: Spelling = NEUTRAL_SPELLING,
): BrokerError | null {
  return checkTopicName(topic) ?? checkContent(content) ?? spelling.checkKeys(extensions) ?? checkExtensions(extensions);
}

/** One checked publish: its group resolved, its topic, content and extensions checked (checkEvent). */
export interface PublishRequest {
  group: string;
  topic: string;
  content: string;
  extensions: Record<string, string>;
  /** The caller's address: the event's sender is derived from it. */
  remoteIp: string;
  /** A checked Idempotency-Key (docs/idempotency.md); absent: every publish is a new event, as in the original. */
  idempotencyKey?: string | undefined;
  /**
   * The W3C trace context the client sent with a STOMP SEND (`traceparent`, `tracestate` headers)
   * or an MQTT 5 PUBLISH (user properties): the publish span's parent. HTTP needs none: its
   * publish span is a child of the request's server span. Ignored when not a valid traceparent.
   */
  trace?: { traceparent: string; tracestate?: string | undefined } | undefined;
}

/**
 * How a publish that reached the log ended: SUCCESS once the indexer's receipt says the event is
 * in a block (for a repeated Idempotency-Key: the original's); TIMEOUT when it may still land;
 * ERROR only when it is certainly not in the ledger: Kafka did not take it, or the indexer
 * refused its key as reused for other content (`err` is then the 100211 BrokerError).
 */
export type PublishOutcome = { status: "SUCCESS"; eventId: string } | { status: "TIMEOUT" } | { status: "ERROR"; err: unknown };

/**
 * The publish path every way in shares (HTTP rest/publish, STOMP SEND): checks the topic exists,
 * appends the event to the group's Kafka log keyed by topic (one topic's events share a
 * partition, so they keep their order) and waits for the indexer's receipt. One instance per
 * gateway: its counter names each publish for the receipt waiter.
 */
export class EventPublisher {
  private readonly deps: PublishDeps;
  // Topics are never deleted (close only checks existence), so a topic seen once exists for
  // good: remembering it saves a Postgres round trip on every publish. Bounded by clearing.
  private readonly known = new Set<string>();
  // Receipts come back to this gateway instance only (its gatewayId is random per start), so a
  // counter names each publish uniquely for its waiter; cheaper than a UUID per publish.
  private published = 0;

  constructor(deps: PublishDeps) {
    this.deps = deps;
  }

  private async topicExists(group: string, topic: string): Promise<boolean> {
    const key = `${group}\u0000${topic}`;
    if (this.known.has(key)) return true;
    if (!(await this.deps.topics.exists(group, topic))) return false;
    if (this.known.size >= 100_000) this.known.clear();
    this.known.add(key);
    return true;
  }

  /**
   * Checks the topic exists (100101 thrown otherwise) and hands the record to the log. Resolves
   * as soon as the append has begun, with the outcome still to come: a caller that awaits each
   * start in turn appends in its own order while the receipts are awaited together. `owner` is
   * who publishes (ownerId: `key:<id>`, or the address without a key): an Idempotency-Key is
   * stored within that scope (scopedIdempotencyKey), here for every way in.
   */
  async start(req: PublishRequest, owner: string): Promise<{ outcome: Promise<PublishOutcome> }> {
    const arrived = this.deps.now();
    if (!(await this.topicExists(req.group, req.topic))) throw BrokerError.of("TOPIC_NOT_EXIST");
    const record: LogRecord = {
      v: 1,
      requestId: (++this.published).toString(36),
      gatewayId: this.deps.gatewayId,
      groupId: req.group,
      topic: req.topic,
      content: req.content,
      extensions: req.extensions,
      sender: senderAddress(req.remoteIp),
      publishedAt: this.deps.now(),
      httpRequestId: currentRequestId(),
    };
    if (req.idempotencyKey !== undefined) {
      const key = scopedIdempotencyKey(owner, req.idempotencyKey);
      record.idempotency = { key, retentionMs: this.deps.idempotencyRetentionMs ?? DEFAULT_IDEMPOTENCY_RETENTION_MS };
    }
    // The receipt timer starts before the append, so the whole publish is bounded by
    // PUBLISH_TIMEOUT_MS even when Kafka is slow or down (behaviour.md 1.7).
    const wait = this.deps.receipts.expect(record.requestId, this.deps.publishTimeoutMs);
    const logTopic = logTopicName(this.deps.kafkaTopicPrefix, req.group);
    const value = encodeLogRecord(record);
    const append = tracingOn()
      ? tracedAppend(logTopic, req.topic, (headers) => this.deps.log.append(logTopic, req.topic, value, headers), req.trace)
      : this.deps.log.append(logTopic, req.topic, value);
    const appended = append.then(
      () => ({ failed: false as const }),
      (err: unknown) => ({ failed: true as const, err }),
    );
    const outcome = this.settle(req, wait, appended).then((o) => {
      this.deps.observe?.(req.group, o.status, (this.deps.now() - arrived) / 1000);
      return o;
    });
    return { outcome };
  }

  private async settle(
    req: PublishRequest,
    wait: ReturnType<ReceiptInbox["expect"]>,
    appended: Promise<{ failed: false } | { failed: true; err: unknown }>,
  ): Promise<PublishOutcome> {
    const first = await Promise.race([appended, wait.receipt.then((receipt) => ({ receipt }))]);
    if ("failed" in first && first.failed) {
      wait.cancel();
      this.deps.logger.error({ err: first.err, topic: req.topic, group: req.group }, "Kafka did not accept a publish");
      // ERROR only when the record was certainly not written; a send that failed after
      // reaching the brokers may still have landed, which is what TIMEOUT means (7.3).
      return certainlyNotWritten(first.err) ? { status: "ERROR", err: first.err } : { status: "TIMEOUT" };
    }
    const receipt = "receipt" in first ? first.receipt : await wait.receipt;
    if (receipt?.idempotency === "conflict") return { status: "ERROR", err: BrokerError.of("IDEMPOTENCY_KEY_REUSED") };
    // Without a receipt the event is durable in Kafka (or on its way) but not confirmed sealed: it still lands.
    return receipt ? { status: "SUCCESS", eventId: receipt.eventId } : { status: "TIMEOUT" };
  }
}

/** Node lower-cases header names. */
const IDEMPOTENCY_KEY_HEADER_NAME = IDEMPOTENCY_KEY_HEADER.toLowerCase();

/** The publish's Idempotency-Key: the header, else the `idempotencyKey` parameter (not an extension); 100210 when bad. */
function idempotencyKey(ctx: OperationContext): string | undefined {
  const header = ctx.req.headers[IDEMPOTENCY_KEY_HEADER_NAME];
  return idempotencyKeyOf(typeof header === "string" ? header : undefined, ctx.params.first(IDEMPOTENCY_KEY_PARAM));
}

/**
 * Who may publish (docs/security.md): the `publish` role in the event's group, read as publish
 * reads it (the first `groupId`), each call counted against the key's publish rate. STOMP's SEND
 * and MQTT's PUBLISH are checked against the same declaration.
 */
export const PUBLISH_ACCESS = { role: "publish", groupIdParam: "first", rateLimited: true } as const satisfies OperationAccess;

/**
 * rest/publish: validates in the variant's order (behaviour.md 7.1; an Idempotency-Key after the
 * extensions), then the shared publish path (EventPublisher); answers only when the event is in a
 * block, or the variant's TIMEOUT. Pass the gateway's one publisher when another way in (STOMP)
 * publishes too.
 */
export function publishOperation(deps: PublishDeps, publisher = new EventPublisher(deps)): Operation {
  const spelling = deps.spelling ?? NEUTRAL_SPELLING;
  return {
    path: "rest/publish",
    kind: "rest",
    variants: ["L", "M", "E"],
    ...PUBLISH_ACCESS,
    failureCode: topicStorageFailure,
    // A body over the limit can only be that large through its content (10240 characters at
    // most): the content rule's 100201. A multipart body that cannot be read has no readable
    // topic or content: publish's own missing-parameter answer 100501.
    paramFailures: { "body-too-large": "CONTENT_TOO_LONG", "malformed-multipart": "URL_INVALID" },
    async handle(ctx) {
      const { variant, params } = ctx;
      const topic = params.first("topic");
      const content = params.first("content");
      if (topic === undefined || content === undefined) throw BrokerError.of("URL_INVALID");
      const rawGroup = params.first("groupId");
      let group = "1";
      if (variant === "E") {
        if (rawGroup !== undefined && isBlank(rawGroup)) throw BrokerError.of("GROUP_ID_INVALID");
      } else {
        group = groupFromValue(variant, rawGroup, deps.groups);
      }
      const extensions = collectExtensions(ctx, spelling);
      const bad = checkEvent(topic, content, extensions, spelling);
      if (bad) throw bad;
      const key = idempotencyKey(ctx);
      if (variant === "E") group = groupFromValue(variant, rawGroup, deps.groups);
      const { outcome } = await publisher.start(
        { group, topic, content, extensions, remoteIp: ctx.remoteIp, idempotencyKey: key },
        ownerId(ctx.caller),
      );
      const o = await outcome;
      if (o.status === "SUCCESS") return bare(sendResult("SUCCESS", topic, o.eventId));
      if (o.status === "TIMEOUT") return timedOut(variant, topic);
      if (o.err instanceof BrokerError) throw o.err;
      if (variant === "E") throw BrokerError.of("TRANSACTION_FAILED", { cause: o.err });
      return bare(sendResult("ERROR", topic, null));
    },
  };
}
