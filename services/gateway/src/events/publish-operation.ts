import { currentRequestId } from "@evb/config";
import {
  BrokerError,
  certainlyNotWritten,
  checkContent,
  checkExtensions,
  checkTopicName,
  EXTENSION_PREFIX,
  encodeLogRecord,
  isBlank,
  type LogRecord,
  type Logger,
  logTopicName,
  senderAddress,
  type Variant,
} from "@evb/domain";
import { groupFromValue } from "../http/group.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { bare } from "../http/replies.ts";
import { topicStorageFailure } from "../http/storage-failures.ts";
import type { ReceiptInbox } from "./receipt-waiter.ts";

/** The topic port (`TopicStore` in main.ts): does the group have this topic? */
export interface TopicCatalog {
  exists(groupId: string, topic: string): Promise<boolean>;
}

/** The log port (`EventLogWriter`): append one record to a Kafka topic, resolved once the brokers acknowledge it. */
export interface EventLog {
  append(topic: string, key: string, value: Buffer): Promise<void>;
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
  /** Told each publish that reached the log: its group, outcome and seconds from arrival to answer (metrics). */
  observe?: (group: string, outcome: "SUCCESS" | "TIMEOUT" | "ERROR", seconds: number) => void;
}

function sendResult(status: string, topic: string | null, eventId: string | null) {
  return { status, topic, eventId };
}

/** Not confirmed in time: TIMEOUT in L and M; E answered 200202 instead (behaviour.md 7.3). */
function timedOut(variant: Variant, topic: string) {
  if (variant === "E") throw BrokerError.of("TRANSACTION_FAILED");
  return bare(sendResult("TIMEOUT", topic, null));
}

/** `event-*` parameters, first value of each (behaviour.md 1.2, 7.2). */
function collectExtensions(ctx: OperationContext): Record<string, string> {
  const ext: Record<string, string> = {};
  for (const [name, values] of ctx.params.raw) {
    if (name.startsWith(EXTENSION_PREFIX)) ext[name] = values[0] ?? "";
  }
  return ext;
}

/**
 * Validates in the variant's order (behaviour.md 7.1), checks the topic exists, appends the
 * event to the group's Kafka log keyed by topic (one topic's events share a partition, so they
 * keep their order), and answers only when the indexer's receipt says the event is in a block.
 */
export function publishOperation(deps: PublishDeps): Operation {
  // Topics are never deleted (close only checks existence), so a topic seen once exists for
  // good: remembering it saves a Postgres round trip on every publish. Bounded by clearing.
  const known = new Set<string>();
  // Receipts come back to this gateway instance only (its gatewayId is random per start), so a
  // counter names each publish uniquely for its waiter; cheaper than a UUID per publish.
  let published = 0;
  const topicExists = async (group: string, topic: string): Promise<boolean> => {
    const key = `${group}\u0000${topic}`;
    if (known.has(key)) return true;
    if (!(await deps.topics.exists(group, topic))) return false;
    if (known.size >= 100_000) known.clear();
    known.add(key);
    return true;
  };
  return {
    path: "rest/publish",
    kind: "rest",
    variants: ["L", "M", "E"],
    failureCode: topicStorageFailure,
    async handle(ctx) {
      const arrived = deps.now();
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
      const bad = checkTopicName(topic) ?? checkContent(content);
      if (bad) throw bad;
      const extensions = collectExtensions(ctx);
      const badExt = checkExtensions(extensions);
      if (badExt) throw badExt;
      if (variant === "E") group = groupFromValue(variant, rawGroup, deps.groups);
      if (!(await topicExists(group, topic))) throw BrokerError.of("TOPIC_NOT_EXIST");

      const record: LogRecord = {
        v: 1,
        requestId: (++published).toString(36),
        gatewayId: deps.gatewayId,
        groupId: group,
        topic,
        content,
        extensions,
        sender: senderAddress(ctx.remoteIp),
        publishedAt: deps.now(),
        httpRequestId: currentRequestId(),
      };
      const outcome = (o: "SUCCESS" | "TIMEOUT" | "ERROR") => deps.observe?.(group, o, (deps.now() - arrived) / 1000);
      // The receipt timer starts before the append, so the whole publish is bounded by
      // PUBLISH_TIMEOUT_MS even when Kafka is slow or down (behaviour.md 1.7).
      const wait = deps.receipts.expect(record.requestId, deps.publishTimeoutMs);
      const appended = deps.log.append(logTopicName(deps.kafkaTopicPrefix, group), topic, encodeLogRecord(record)).then(
        () => ({ failed: false as const }),
        (err: unknown) => ({ failed: true as const, err }),
      );
      const first = await Promise.race([appended, wait.receipt.then((receipt) => ({ receipt }))]);
      if ("failed" in first && first.failed) {
        wait.cancel();
        deps.logger.error({ err: first.err, topic, group }, "Kafka did not accept a publish");
        // ERROR only when the record was certainly not written; a send that failed after
        // reaching the brokers may still have landed, which is what TIMEOUT means (7.3).
        if (!certainlyNotWritten(first.err)) {
          outcome("TIMEOUT");
          return timedOut(variant, topic);
        }
        outcome("ERROR");
        if (variant === "E") throw BrokerError.of("TRANSACTION_FAILED", { cause: first.err });
        return bare(sendResult("ERROR", topic, null));
      }
      const receipt = "receipt" in first ? first.receipt : await wait.receipt;
      if (receipt) {
        outcome("SUCCESS");
        return bare(sendResult("SUCCESS", topic, receipt.eventId));
      }
      // Durable in Kafka (or on its way) but not yet confirmed sealed: it still lands.
      outcome("TIMEOUT");
      return timedOut(variant, topic);
    },
  };
}
