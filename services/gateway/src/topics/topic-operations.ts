import { BrokerError, checkTopicName, senderAddress, type Variant } from "@evb/domain";
import type { TopicRow, TopicStore } from "@evb/storage";
import { resolveGroup } from "../http/group.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { storageFailure, topicStorageFailure } from "../http/storage-failures.ts";
import { topicView } from "./topic-view.ts";

export interface TopicOperationDeps {
  topics: TopicStore;
  groups: ReadonlySet<string>;
  now: () => number;
  /** Makes an opened topic's row durable in Kafka (the group's chain topic); throws when it could not. */
  recordTopic: (row: TopicRow) => Promise<void>;
}

const ALL: readonly Variant[] = ["L", "M", "E"];
/** A failed topic creation is TRANSACTION_FAILED in every variant, TRANSACTION_TIMEOUT when it timed out in M and L. */
const openFailure = storageFailure({ e: "TRANSACTION_FAILED", mlOther: "TRANSACTION_FAILED" });

/**
 * Reads `topic` and `groupId` in the variant's order: M and L check the group first; E checks
 * the topic first for open/exist/close and the group first for state (behaviour.md 4).
 */
function topicAndGroup(ctx: OperationContext, deps: TopicOperationDeps, eGroupFirst: boolean): { topic: string; group: string } {
  const topic = ctx.params.required("topic");
  const groupFirst = ctx.variant !== "E" || eGroupFirst;
  let group = groupFirst ? resolveGroup(ctx.params, deps.groups) : "";
  const bad = checkTopicName(topic);
  if (bad) throw bad;
  if (!groupFirst) group = resolveGroup(ctx.params, deps.groups);
  return { topic, group };
}

export function topicOperations(deps: TopicOperationDeps): Operation[] {
  return [openOperation(deps), closeOperation(deps), existOperation(deps), stateOperation(deps), listOperation(deps)];
}

function openOperation(deps: TopicOperationDeps): Operation {
  return {
    path: "rest/open",
    kind: "rest",
    variants: ALL,
    role: "publish", // a publisher creates the topic it writes to
    failureCode: openFailure,
    async handle(ctx) {
      const { topic, group } = topicAndGroup(ctx, deps, false);
      const row = await deps.topics.open(group, topic, senderAddress(ctx.remoteIp), deps.now());
      // `true` is a promise that the topic survives a lost ledger: its row is in Kafka first.
      // Opening an existing topic writes its row again (harmless: the same values, and
      // compaction keeps one), so a row whose earlier write failed becomes durable too.
      await deps.recordTopic(row);
      return data(true);
    },
  };
}

/** close is only an existence check in the original: it changes nothing. */
function closeOperation(deps: TopicOperationDeps): Operation {
  return {
    path: "rest/close",
    kind: "rest",
    variants: ALL,
    role: "admin", // changes what other clients see
    failureCode: topicStorageFailure,
    async handle(ctx) {
      const { topic, group } = topicAndGroup(ctx, deps, false);
      if (!(await deps.topics.exists(group, topic))) throw BrokerError.of("TOPIC_NOT_EXIST");
      return data(true);
    },
  };
}

function existOperation(deps: TopicOperationDeps): Operation {
  return {
    path: "rest/exist",
    kind: "rest",
    variants: ALL,
    failureCode: topicStorageFailure,
    async handle(ctx) {
      const { topic, group } = topicAndGroup(ctx, deps, false);
      return data(await deps.topics.exists(group, topic));
    },
  };
}

function stateOperation(deps: TopicOperationDeps): Operation {
  return {
    path: "rest/state",
    kind: "rest",
    variants: ALL,
    failureCode: topicStorageFailure,
    async handle(ctx) {
      const { topic, group } = topicAndGroup(ctx, deps, true);
      const row = await deps.topics.get(group, topic);
      if (!row) throw BrokerError.of("TOPIC_NOT_EXIST");
      return data(topicView(ctx.variant, row));
    },
  };
}

function listOperation(deps: TopicOperationDeps): Operation {
  return {
    path: "rest/list",
    kind: "rest",
    variants: ALL,
    failureCode: topicStorageFailure,
    async handle(ctx) {
      // Paging is checked before the group, in every variant (behaviour.md 6.3).
      const pageIndex = ctx.params.requiredInt("pageIndex");
      const pageSize = ctx.params.requiredInt("pageSize");
      if (pageIndex === null || pageIndex < 0) throw BrokerError.of("PAGE_INDEX_INVALID");
      if (pageSize === null || pageSize < 1 || pageSize > 100) throw BrokerError.of("PAGE_SIZE_INVALID");
      const group = resolveGroup(ctx.params, deps.groups);
      const { total, rows } = await deps.topics.list(group, pageIndex * pageSize, pageSize);
      return data({
        total,
        pageIndex,
        pageSize: ctx.variant === "E" ? pageSize : rows.length,
        topicInfoList: rows.map((r) => topicView(ctx.variant, r)),
      });
    },
  };
}
