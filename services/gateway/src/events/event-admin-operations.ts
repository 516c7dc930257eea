import { BrokerError, formatLocalTimestamp, type MatchRule, matchesPattern, type Spelling, type Variant, wireEvent } from "@evb/domain";
import { type EventReads, eventDeliveryState, type FoundEvent } from "@evb/storage";
import { adminPage } from "../admin/admin-paging.ts";
import { resolveGroup } from "../http/group.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { nonBlank } from "../http/params.ts";
import { data } from "../http/replies.ts";
import { storageFailure } from "../http/storage-failures.ts";
import { attemptRecord } from "../subscriptions/delivery-attempts-operation.ts";
import { shownCallbackUrl } from "../subscriptions/shown-callback-url.ts";
import { DEFAULT_PAGE_SIZE, MAX_PATTERN_TOPICS, planEventSearch, SEARCH_WINDOW, type SearchPlan } from "./event-search.ts";

export interface EventAdminDeps {
  reads: Pick<EventReads, "topicsStartingWith" | "search" | "event" | "candidateSubscriptions" | "deliveriesOf">;
  groups: ReadonlySet<string>;
  /** How extension names are shown (BRAND), as getEvent shows them. */
  spelling?: Spelling;
}

/** Topic names a pattern's literal prefix may cover before the search is refused as too wide. */
const MAX_PREFIX_TOPICS = 20_000;
/** Live subscriptions of a group looked at for one event (exact ones and every pattern). */
const MAX_SUBSCRIPTIONS = 10_000;
/** Attempts shown for one event, over the page's subscriptions. */
const MAX_ATTEMPTS = 1_000;

/** A timeout is TRANSACTION_TIMEOUT in M and L, any other storage failure the generic code (as getEvent). */
const eventReadFailure = storageFailure({});

/** The `+`/`#` rule of the variant's subscriptions: `#` may stand for zero levels only in E. */
function ruleOf(variant: Variant): MatchRule {
  return variant === "E" ? "E" : "M";
}

/** An event as the operator lists show it: the variant's Event (getEvent's shape), its block and seal time. */
function eventRecord(ev: FoundEvent, variant: Variant, spelling: Spelling | undefined) {
  return {
    ...wireEvent(ev, variant, spelling),
    blockNumber: ev.height,
    eventTime: ev.timestampMs,
    eventTimeStamp: formatLocalTimestamp(ev.timestampMs),
  };
}

/**
 * Extensions (issue 23), in every variant's admin shape:
 * - admin/events: the events of a group by topic or `+`/`#` pattern, time range and eventId, with
 *   their content, newest first in ledger order, paged (event-search.ts bounds it);
 * - admin/eventDeliveries: for one event, every live subscription of its group whose topic or
 *   pattern matches it, with where the event stands for it and every attempt the log keeps.
 */
export function eventAdminOperations(deps: EventAdminDeps): Operation[] {
  return [
    {
      path: "admin/events",
      kind: "admin",
      variants: ["L", "M", "E"],
      failureCode: eventReadFailure,
      async handle(ctx) {
        const group = resolveGroup(ctx.params, deps.groups);
        const plan = planEventSearch({
          topic: nonBlank(ctx.params, "topic"),
          eventId: nonBlank(ctx.params, "eventId"),
          from: nonBlank(ctx.params, "from"),
          to: nonBlank(ctx.params, "to"),
          pageNumber: ctx.params.optionalInt("pageNumber"),
          pageSize: ctx.params.optionalInt("pageSize"),
        });
        const topics = await topicsOf(deps, group, plan, ruleOf(ctx.variant));
        const found =
          topics !== null && topics.length === 0
            ? { total: 0, events: [] }
            : await deps.reads.search({
                groupId: group,
                topics,
                eventId: plan.eventId,
                fromMs: plan.fromMs,
                toMs: plan.toMs,
                offset: (plan.pageNumber - 1) * plan.pageSize,
                limit: plan.pageSize,
                countCap: SEARCH_WINDOW,
              });
        const records = found.events.map((ev) => eventRecord(ev, ctx.variant, deps.spelling));
        return data(adminPage(found.total, plan.pageNumber, plan.pageSize, records));
      },
    },
    {
      path: "admin/eventDeliveries",
      kind: "admin",
      variants: ["L", "M", "E"],
      // Receivers' URLs and answers of every subscription of the event's group.
      role: "admin",
      failureCode: eventReadFailure,
      handle: (ctx) => eventDeliveries(deps, ctx),
    },
  ];
}

/** The topics a search is limited to: one, those a pattern matches (bounded), or null for any. */
async function topicsOf(deps: EventAdminDeps, group: string, plan: SearchPlan, rule: MatchRule): Promise<string[] | null> {
  if (plan.topic === null) return null;
  if (plan.topic.kind === "plain") return [plan.topic.name];
  const { pattern, prefix } = plan.topic;
  const named = await deps.reads.topicsStartingWith(group, prefix, MAX_PREFIX_TOPICS + 1);
  if (named.length > MAX_PREFIX_TOPICS) throw BrokerError.of("EVENT_SEARCH_TOO_WIDE");
  const matched = named.filter((t) => matchesPattern(pattern, t, rule));
  if (matched.length > MAX_PATTERN_TOPICS) throw BrokerError.of("EVENT_SEARCH_TOO_WIDE");
  return matched;
}

/**
 * admin/eventDeliveries?eventId=ID[&groupId=G&pageNumber=1&pageSize=20]: the event's matching
 * live subscriptions (oldest first, paged), each with its state (event-delivery-state.ts), the
 * resends of it still waiting and its attempts at it, newest first.
 */
async function eventDeliveries(deps: EventAdminDeps, ctx: OperationContext) {
  const id = ctx.params.required("eventId");
  const group = resolveGroup(ctx.params, deps.groups);
  const pageNumber = ctx.params.optionalInt("pageNumber") ?? 1;
  const pageSize = ctx.params.optionalInt("pageSize") ?? DEFAULT_PAGE_SIZE;
  if (pageNumber < 1) throw BrokerError.of("PAGE_INDEX_INVALID");
  if (pageSize < 1 || pageSize > 100) throw BrokerError.of("PAGE_SIZE_INVALID");
  const plan = planEventSearch({ eventId: id, pageNumber: 1, pageSize: 1 });
  const target = plan.eventId as { id: string; height: number };
  const ev = target.height < 1 ? null : await deps.reads.event(group, target.id, target.height);
  if (!ev) throw BrokerError.of("EVENT_ID_NOT_EXIST");
  const subs = (await deps.reads.candidateSubscriptions(group, ev.topic, MAX_SUBSCRIPTIONS)).filter((s) =>
    matchesPattern(s.topic, ev.topic, s.matchRule),
  );
  const page = subs.slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
  const seen =
    page.length === 0
      ? { backlog: new Set<string>(), heads: new Set<string>(), resends: new Map<string, number>(), attempts: [] }
      : await deps.reads.deliveriesOf(
          page.map((s) => s.id),
          { eventId: ev.eventId, height: ev.height, idx: ev.idx, sealedAt: ev.timestampMs },
          MAX_ATTEMPTS,
        );
  const records = page.map((s) => {
    const attempts = seen.attempts.filter((a) => a.subscriptionId === s.id);
    const state = eventDeliveryState(ev, {
      inBacklog: seen.backlog.has(s.id),
      head: seen.heads.has(s.id),
      dead: s.deadAt !== null,
      answered2xx: attempts.some((a) => a.error === null),
      delivered: s.delivered,
      startHeight: s.startHeight,
    });
    return {
      subscriptionId: s.id,
      topicName: s.topic,
      url: shownCallbackUrl(s.url, s.owner, ctx.caller),
      state,
      resendsWaiting: seen.resends.get(s.id) ?? 0,
      attempts: attempts.map(attemptRecord),
    };
  });
  return data(adminPage(subs.length, pageNumber, pageSize, records));
}
