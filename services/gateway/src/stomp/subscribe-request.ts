import {
  BrokerError,
  checkPattern,
  checkTopicName,
  isBlank,
  isPattern,
  javaSplit,
  type ParsedEventId,
  parseEventId,
  TopicTrie,
  topicHash8,
} from "@evb/domain";
import { FilterTrie } from "../mqtt/filter-trie.ts";

/**
 * The pure decisions of a STOMP SUBSCRIBE (protocols.md 2.5): the destination list, the start
 * position, each item's rules, the subscription id, and which events a subscription takes. The
 * ledger reads between them (height, topic existence, the start event) are the session's.
 */

/** Where delivery starts: after the head, from the first block, after a block, or after one event. */
export type StartPosition =
  | { kind: "last" }
  | { kind: "first" }
  | { kind: "height"; height: number }
  | { kind: "after"; eventId: string; block: number };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The items of a destination: split on `,` with Java's rules (no trimming, trailing empty items
 * dropped). No item, or an empty one, is 100105; a missing destination too (the original threw a
 * NullPointerException there and lost the session).
 */
export function destinationItems(destination: string | undefined): string[] | BrokerError {
  const items = destination === undefined ? [] : javaSplit(destination, ",");
  if (items.length === 0 || items.includes("")) return BrokerError.of("TOPIC_LIST_EMPTY");
  return items;
}

/**
 * Not the original's: a destination of more than `max` items (STOMP_MAX_DESTINATION_TOPICS) is
 * 100110, checked right after the list's own rule and before any ledger read; each item is
 * checked, looked up and compiled, and a subscription's items are what one event is matched against.
 */
export function itemCountRefusal(items: readonly string[], max: number): BrokerError | null {
  return items.length > max ? BrokerError.of("TOPIC_LIST_TOO_LONG") : null;
}

/**
 * The `eventId` header as a start position, checked against the group's current height:
 * blank or OFFSET_LAST → after the head; OFFSET_FIRST → everything; digits → a height that must
 * be 1..height (100307); otherwise an event id: too long 100301, malformed 100302, of another
 * topic when exactly one item is given (a pattern included) 100302, its block above the head 100304.
 */
export function startPosition(raw: string | undefined, items: readonly string[], height: number): StartPosition | BrokerError {
  if (raw === undefined || isBlank(raw) || raw === "OFFSET_LAST") return { kind: "last" };
  if (raw === "OFFSET_FIRST") return { kind: "first" };
  if (/^\d+$/.test(raw)) {
    const h = raw.length > 15 ? Number.POSITIVE_INFINITY : Number(raw);
    return h >= 1 && h <= height ? { kind: "height", height: h } : BrokerError.of("BLOCK_HEIGHT_INVALID");
  }
  const parsed = parseEventId(raw);
  if (!parsed.ok) return parsed.error;
  if (items.length === 1 && parsed.value.hash8 !== topicHash8(items[0] as string)) return BrokerError.of("EVENT_ID_ILLEGAL");
  if (parsed.value.block > BigInt(height)) return BrokerError.of("EVENT_ID_MISMATCH");
  return { kind: "after", eventId: raw, block: Number((parsed.value as ParsedEventId).block) };
}

/** One item's rules: a pattern's (100102/100106/100109) or a name's (100103/100102/100106). */
export function checkItem(item: string): BrokerError | null {
  return isPattern(item) ? checkPattern(item) : checkTopicName(item);
}

/** The items whose existence is checked (names; patterns never are). */
export function namedTopics(items: readonly string[]): string[] {
  return items.filter((i) => !isPattern(i));
}

/**
 * `event-subscriptionId`: absent or blank → a new id; not a UUID → 100505; the id of a subscription
 * still live on this gateway → 100507; otherwise the subscription continues under that id.
 */
export function subscriptionIdFor(raw: string | undefined, live: (id: string) => boolean, fresh: () => string): string | BrokerError {
  if (raw === undefined || isBlank(raw)) return fresh();
  if (!UUID.test(raw)) return BrokerError.of("SUBSCRIPTION_ID_FORMAT");
  if (live(raw)) return BrokerError.of("SUBSCRIPTION_ID_LIVE");
  return raw;
}

/** Which events a subscription takes: topics and `+`/`#` patterns (the M rule: `a/#` does not match `a`), and an optional tag. */
export interface EventFilter {
  items: readonly string[];
  /**
   * The value the tag extension must equal, and the stored keys it is read from, first found wins
   * (Spelling.storedKeys: `event-tag` by default; under BRAND=weevent both spellings, the
   * original's first).
   */
  tag: { keys: readonly string[]; value: string } | null;
  /** How items take topics; absent: the broker's M rule ("mqtt": MQTT's, where `a/#` takes `a`, topic-filter.ts). */
  rule?: FilterRule;
}

export type FilterRule = "M" | "mqtt";

/**
 * A filter compiled once for the events of a subscription: its distinct items in a topic trie
 * (TopicTrie for the M rule, FilterTrie for MQTT's), so that one event costs about the topic's
 * depth whatever the number of items, not a scan of the list.
 */
export function compileFilter(filter: EventFilter): (topic: string, extensions: Readonly<Record<string, string>>) => boolean {
  const items = [...new Set(filter.items)];
  let takesTopic: (topic: string) => boolean;
  if (filter.rule === "mqtt") {
    const trie = new FilterTrie<true>();
    for (const item of items) trie.add(item, true);
    takesTopic = (topic) => trie.match(topic).length > 0;
  } else {
    const trie = new TopicTrie<true>();
    for (const item of items) trie.add(item, true, "M");
    takesTopic = (topic) => trie.match(topic).length > 0;
  }
  const { tag } = filter;
  return (topic, extensions) => (!tag || tagValue(tag.keys, extensions) === tag.value) && takesTopic(topic);
}

export function takesEvent(filter: EventFilter, topic: string, extensions: Readonly<Record<string, string>>): boolean {
  return compileFilter(filter)(topic, extensions);
}

function tagValue(keys: readonly string[], extensions: Readonly<Record<string, string>>): string | undefined {
  for (const k of keys) if (Object.hasOwn(extensions, k)) return extensions[k];
  return undefined;
}

/** `[a, b]` for a list, the item itself for one: the topicName listSubscription shows (protocols.md 4). */
export function listedTopicName(items: readonly string[]): string {
  return items.length === 1 ? (items[0] as string) : `[${items.join(", ")}]`;
}
