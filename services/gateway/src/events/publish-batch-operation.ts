import { BrokerError, isBlank, NEUTRAL_SPELLING, type Variant } from "@evb/domain";
import { ownerId } from "../http/caller-address.ts";
import { groupFromValue } from "../http/group.ts";
import { LoopBudget } from "../http/loop-budget.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { genericCode } from "../http/params.ts";
import { bare } from "../http/replies.ts";
import { topicStorageFailure } from "../http/storage-failures.ts";
import { batchWeight, checkBatchEvent, parseBatchBody } from "./publish-batch.ts";
import { type EventPublisher, PUBLISH_ACCESS, type PublishDeps, type PublishOutcome } from "./publish-operation.ts";

/** One event's answer: publish's SendResult, or the broker error publish would have answered for it. */
type ItemResult =
  | { status: "SUCCESS" | "TIMEOUT" | "ERROR"; topic: string; eventId: string | null }
  | { code: number; message: string | null };

function itemError(err: BrokerError): ItemResult {
  return { code: err.code, message: err.wireMessage };
}

/** What rest/publish answers for an outcome (TIMEOUT in L and M, 200202 in E), as one item. */
function outcomeResult(variant: Variant, topic: string, o: PublishOutcome): ItemResult {
  if (o.status === "SUCCESS") return { status: "SUCCESS", topic, eventId: o.eventId };
  if (o.status === "ERROR" && o.err instanceof BrokerError) return itemError(o.err);
  if (variant === "E") return itemError(BrokerError.of("TRANSACTION_FAILED"));
  return { status: o.status, topic, eventId: null };
}

/** A batch has no single Idempotency-Key: each event carries its own. */
function refuseBatchKey(ctx: OperationContext): void {
  if (ctx.req.headers["idempotency-key"] !== undefined) {
    throw new BrokerError(
      BrokerError.of("IDEMPOTENCY_KEY_INVALID").code,
      "an Idempotency-Key header cannot name a batch; give each event its idempotencyKey",
    );
  }
}

/** The batch's group, checked once before its events, as rest/publish checks one (E: blank is 100306; unknown 200211). */
function batchGroup(variant: Variant, raw: string | undefined, groups: ReadonlySet<string>): string {
  if (variant === "E" && raw !== undefined && isBlank(raw)) throw BrokerError.of("GROUP_ID_INVALID");
  return groupFromValue(variant, raw, groups);
}

/**
 * rest/publishBatch (not the original's; docs/publishing.md): up to MAX_BATCH_EVENTS events in
 * one JSON body, each checked as rest/publish checks one and appended through the gateway's one
 * EventPublisher in the body's order (one topic's events keep that order in the ledger), their
 * receipts awaited together; answers one result per event, in order, once every event is sealed
 * or timed out. Counts each event against the key's publish rate.
 */
export function publishBatchOperation(deps: PublishDeps, publisher: EventPublisher): Operation {
  const spelling = deps.spelling ?? NEUTRAL_SPELLING;
  return {
    path: "rest/publishBatch",
    kind: "rest",
    variants: ["L", "M", "E"],
    ...PUBLISH_ACCESS,
    body: "json",
    rateWeight: (params) => batchWeight(params.json),
    failureCode: topicStorageFailure,
    paramFailures: { "body-too-large": "BATCH_TOO_LARGE", "malformed-json": "BATCH_INVALID" },
    async handle(ctx) {
      const body = parseBatchBody(ctx.params.json);
      if (body instanceof BrokerError) throw body;
      refuseBatchKey(ctx);
      const group = batchGroup(ctx.variant, ctx.params.first("groupId"), deps.groups);
      const owner = ownerId(ctx.caller);
      // Checking and encoding a thousand large events is tens of milliseconds: in slices.
      const budget = new LoopBudget();
      const results: (ItemResult | Promise<ItemResult>)[] = [];
      for (const raw of body.events) {
        await budget.maybePause();
        const ev = checkBatchEvent(raw, spelling);
        if (ev instanceof BrokerError) {
          results.push(itemError(ev));
          continue;
        }
        try {
          // Each start is awaited in turn: the appends go to the log in the body's order.
          const { outcome } = await publisher.start({ group, ...ev, remoteIp: ctx.remoteIp }, owner);
          results.push(outcome.then((o) => outcomeResult(ctx.variant, ev.topic, o)));
        } catch (err) {
          results.push(itemError(startFailure(ctx.variant, err, deps)));
        }
      }
      return bare(await Promise.all(results));
    },
  };
}

/** Why an event did not reach the log: the topic does not exist (100101), or storage failed (publish's failure code). */
function startFailure(variant: Variant, err: unknown, deps: PublishDeps): BrokerError {
  if (err instanceof BrokerError) return err;
  deps.logger.error({ err }, "a batch event's topic could not be checked");
  const documented = topicStorageFailure(variant, err);
  return documented ? BrokerError.of(documented) : new BrokerError(genericCode(variant), "service unavailable");
}
