import { BrokerError, checkPattern, checkTopicName, isBlank, isPattern, parseEventId, splitLevels } from "@evb/domain";

/** Matches a search may page through: pageNumber × pageSize beyond it answers 100310 (narrow the search instead). */
export const SEARCH_WINDOW = 10_000;
/** Topics a pattern may match in one search (each is one more key of the topic index to read). */
export const MAX_PATTERN_TOPICS = 1_000;
export const DEFAULT_PAGE_SIZE = 20;

/** What admin/events was sent (absent or blank values are undefined). */
export interface SearchRequest {
  topic?: string;
  eventId?: string;
  from?: string;
  to?: string;
  pageNumber: number | null;
  pageSize: number | null;
}

type TopicFilter = { kind: "plain"; name: string } | { kind: "pattern"; pattern: string; prefix: string };

/** A search, checked and bounded: the gateway turns it into an `EventQuery` of the storage package. */
export interface SearchPlan {
  topic: TopicFilter | null;
  eventId: { id: string; height: number } | null;
  fromMs: number | null;
  toMs: number | null;
  pageNumber: number;
  pageSize: number;
}

/**
 * A time parameter: epoch milliseconds (digits) or an ISO-8601 date-time with a zone (`Z` or an
 * offset); absent or blank is null. Anything else answers 100309.
 */
export function parseTime(raw: string | undefined): number | null {
  if (raw === undefined || isBlank(raw)) return null;
  const t = raw.trim();
  if (/^\d{1,15}$/.test(t)) return Number(t);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(t)) throw BrokerError.of("TIME_INVALID");
  const ms = Date.parse(t);
  if (Number.isNaN(ms) || ms < 0) throw BrokerError.of("TIME_INVALID");
  return ms;
}

/** The literal levels of a pattern before its first wildcard level, joined (`a/b/+/c` → `a/b/`): every topic it matches starts so. */
export function patternPrefix(pattern: string): string {
  const levels = splitLevels(pattern);
  const literal: string[] = [];
  for (const level of levels) {
    if (level === "+" || level === "#") return literal.length === 0 ? "" : `${literal.join("/")}/`;
    literal.push(level);
  }
  return literal.join("/");
}

/**
 * Checks admin/events's parameters in order (page number 100104, page size 100107, topic or
 * pattern as subscribe checks them, eventId as getEvent does, times 100309) and refuses a search
 * no index bounds: without a topic, a pattern, an eventId or both ends of a time range it answers
 * 100308; a page reaching past the first SEARCH_WINDOW matches answers 100310.
 */
export function planEventSearch(req: SearchRequest): SearchPlan {
  const pageNumber = req.pageNumber ?? 1;
  const pageSize = req.pageSize ?? DEFAULT_PAGE_SIZE;
  if (pageNumber < 1) throw BrokerError.of("PAGE_INDEX_INVALID");
  if (pageSize < 1 || pageSize > 100) throw BrokerError.of("PAGE_SIZE_INVALID");
  const topic = req.topic === undefined ? null : topicFilter(req.topic);
  const eventId = req.eventId === undefined ? null : eventIdFilter(req.eventId);
  const fromMs = parseTime(req.from);
  const toMs = parseTime(req.to);
  if (fromMs !== null && toMs !== null && fromMs > toMs) throw BrokerError.of("TIME_INVALID");
  if (topic === null && eventId === null && (fromMs === null || toMs === null)) throw BrokerError.of("EVENT_SEARCH_UNBOUNDED");
  if (pageNumber * pageSize > SEARCH_WINDOW) throw BrokerError.of("EVENT_SEARCH_TOO_WIDE");
  return { topic, eventId, fromMs, toMs, pageNumber, pageSize };
}

function topicFilter(topic: string): TopicFilter {
  const pattern = isPattern(topic);
  const bad = pattern ? checkPattern(topic) : checkTopicName(topic);
  if (bad) throw bad;
  return pattern ? { kind: "pattern", pattern: topic, prefix: patternPrefix(topic) } : { kind: "plain", name: topic };
}

/**
 * An eventId checked as getEvent checks it (100302, 100301), with the block it names; a block past
 * every safe height cannot exist (height -1: found nothing).
 */
export function eventIdFilter(id: string): { id: string; height: number } {
  const parsed = parseEventId(id);
  if (!parsed.ok) throw parsed.error;
  const block = parsed.value.block;
  return { id, height: block > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(block) };
}
