import { randomUUID } from "node:crypto";
import { BrokerError, EXTENSION_PREFIX, type Spelling } from "@evb/domain";
import { AFTER_BLOCK, type FeedPosition } from "@evb/storage";
import type { TopicCatalog } from "../events/publish-operation.ts";
import { groupFromValue } from "../http/group.ts";
import type { LedgerFeed } from "./ledger-subscription.ts";
import { header, type StompFrame } from "./stomp-frame.ts";
import {
  checkItem,
  destinationItems,
  type EventFilter,
  itemCountRefusal,
  namedTopics,
  type StartPosition,
  startPosition,
  subscriptionIdFor,
  takesEvent,
} from "./subscribe-request.ts";

/** The ledger lookups SUBSCRIBE makes besides reading: topic existence and where a start event sits. */
interface SubscribeLedger extends LedgerFeed {
  locate(
    groupId: string,
    eventId: string,
    height: number,
  ): Promise<(FeedPosition & { topic: string; extensions: Record<string, string> }) | null>;
}

export interface SubscribeContext {
  groups: ReadonlySet<string>;
  topics: TopicCatalog;
  ledger: SubscribeLedger;
  /** Whether a subscription id is live on this gateway (100507). */
  live: (id: string) => boolean;
  /** Which spellings of `event-subscriptionId` and `event-tag` are read, and which stored tags match (BRAND). */
  spelling: Spelling;
  /** STOMP_MAX_DESTINATION_TOPICS: the most items one destination may list (100110 past it). */
  maxTopics: number;
}

/** A SUBSCRIBE that passed every check: what to answer and where to start. */
export interface SubscriptionPlan {
  id: string;
  /** Whether the SUBSCRIBE named the id (a resume), rather than the gateway making one. */
  named: boolean;
  group: string;
  destination: string;
  filter: EventFilter;
  /** Deliver strictly after this position. */
  start: FeedPosition;
}

/** A header as this deployment reads it (`event-x`; under BRAND=weevent `weevent-x`, then `event-x`), with the spelling found. */
function spelled(frame: StompFrame, name: string, spelling: Spelling): { key: string; value: string } | undefined {
  for (const key of spelling.spellings(EXTENSION_PREFIX + name)) {
    const value = header(frame, key);
    if (value !== undefined) return { key, value };
  }
  return undefined;
}

/** The SUBSCRIBE's tag filter: the stored keys its header's name shows as, and the value. */
function tagFilter(frame: StompFrame, spelling: Spelling): EventFilter["tag"] {
  const tag = spelled(frame, "tag", spelling);
  return tag ? { keys: spelling.storedKeys(tag.key), value: tag.value } : null;
}

/**
 * The checks of a SUBSCRIBE in the original's order (protocols.md 2.5), first failure wins: the
 * list (100105; not the original's: more than maxTopics items, 100110), the group (200211), the start offset against the head (100307, 100301, 100302,
 * 100304), each item's rules and a name's existence (100101), the subscription id (100505,
 * 100507), and an event-id start that is not among the events the subscription takes (100303).
 * Throws a BrokerError; a storage failure throws as it is.
 */
export async function planSubscription(frame: StompFrame, ctx: SubscribeContext): Promise<SubscriptionPlan> {
  const destination = header(frame, "destination");
  const items = destinationItems(destination);
  if (items instanceof BrokerError) throw items;
  const tooMany = itemCountRefusal(items, ctx.maxTopics);
  if (tooMany) throw tooMany;
  const group = groupFromValue("L", header(frame, "groupId"), ctx.groups);
  const height = await ctx.ledger.head(group);
  const start = startPosition(header(frame, "eventId"), items, height);
  if (start instanceof BrokerError) throw start;
  for (const item of items) {
    const bad = checkItem(item);
    if (bad) throw bad;
  }
  for (const name of namedTopics(items)) if (!(await ctx.topics.exists(group, name))) throw BrokerError.of("TOPIC_NOT_EXIST");
  const named = spelled(frame, "subscriptionId", ctx.spelling)?.value;
  const id = subscriptionIdFor(named, ctx.live, randomUUID);
  if (id instanceof BrokerError) throw id;
  const filter: EventFilter = { items, tag: tagFilter(frame, ctx.spelling) };
  return {
    id,
    named: id === named,
    group,
    destination: destination as string,
    filter,
    start: await startAt(start, height, group, filter, ctx.ledger),
  };
}

/** The position a start means; an event id must name an event of its block that the subscription takes (else 100303). */
async function startAt(
  start: StartPosition,
  height: number,
  group: string,
  filter: EventFilter,
  ledger: SubscribeLedger,
): Promise<FeedPosition> {
  switch (start.kind) {
    case "last":
      return { height, idx: AFTER_BLOCK };
    case "first":
      return { height: 0, idx: AFTER_BLOCK };
    case "height":
      return { height: start.height, idx: AFTER_BLOCK };
    case "after": {
      const at = await ledger.locate(group, start.eventId, start.block);
      if (!at || !takesEvent(filter, at.topic, at.extensions)) throw BrokerError.of("EVENT_ID_NOT_EXIST");
      return { height: at.height, idx: at.idx };
    }
  }
}
