/**
 * The broker's error codes and their exact wire messages (behaviour.md section 3). Typos and odd
 * spacing are part of the wire contract. Handlers refer to entries by name, never by literal.
 */
export const BROKER_ERRORS = {
  TOPIC_NOT_EXIST: { code: 100101, message: "topic not exist" },
  TOPIC_TOO_LONG: { code: 100102, message: "topic name exceeds max length[64 bytes]" },
  TOPIC_BLANK: { code: 100103, message: "topic name is blank" },
  PAGE_INDEX_INVALID: { code: 100104, message: "page index should be an integer start from 0" },
  TOPIC_INVALID_CHAR: {
    code: 100106,
    message: "topic name contain invalid char, ascii must be in[32, 128] except wildcard(+,#)",
  },
  PAGE_SIZE_INVALID: { code: 100107, message: "page size should be an integer in(1, 100)" },
  TOPIC_MISMATCH_E: { code: 100108, message: "topic name not match with last" },
  TOPIC_MISMATCH_M: { code: 100108, message: "topic name not match with last subscribe" },
  /** STOMP SUBSCRIBE only (protocols.md 2.8). */
  TOPIC_LIST_EMPTY: { code: 100105, message: "topic list is empty or has empty value" },
  PATTERN_INVALID: { code: 100109, message: "invalid topic pattern" },
  /** Not the original's: a STOMP SUBSCRIBE destination of more than STOMP_MAX_DESTINATION_TOPICS items (protocols.md 2.5). */
  TOPIC_LIST_TOO_LONG: { code: 100110, message: "topic list has more items than one subscription may hold; split it" },
  CONTENT_BLANK: { code: 100200, message: "event content is blank" },
  CONTENT_TOO_LONG: { code: 100201, message: "event content exceeds max length[10k bytes]" },
  /**
   * An extension key without the prefix (behaviour.md 7.1 step 6): no way in collects one. The
   * text names the neutral prefix; `Spelling.checkKeys` answers it in the deployment's (BRAND).
   */
  EXTENSION_KEY_INVALID: { code: 100206, message: "event extensions key not startwith event-" },
  EXTENSIONS_TOO_LONG: { code: 100204, message: "event extensions exceeds max length[1k bytes]" },
  /** Not the original's: an Idempotency-Key (header or `idempotencyKey`) not of 1–255 visible ASCII characters, or two that differ (docs/idempotency.md). */
  IDEMPOTENCY_KEY_INVALID: { code: 100210, message: "idempotency key is illegal, it must be 1 to 255 visible ascii chars" },
  /** Not the original's: the Idempotency-Key was used within its window for another topic, content or extensions. */
  IDEMPOTENCY_KEY_REUSED: { code: 100211, message: "idempotency key was already used for another event content" },
  /**
   * Not the original's: rest/publishBatch's body is not a JSON object with an `events` array of 1
   * to 1000 events (docs/publishing.md).
   */
  BATCH_INVALID: { code: 100212, message: "batch body must be a JSON object with an events array of 1 to 1000 events" },
  /** Not the original's: rest/publishBatch's body is larger than BODY_LIMIT_BYTES (or 1048576 characters). */
  BATCH_TOO_LARGE: { code: 100213, message: "batch body exceeds the body limit; send fewer or smaller events per batch" },
  EVENT_ID_TOO_LONG: { code: 100301, message: "eventId exceeds max length[64 bytes]" },
  EVENT_ID_ILLEGAL: { code: 100302, message: "eventId is illegal" },
  EVENT_ID_NOT_EXIST: { code: 100303, message: "eventId is not exist" },
  EVENT_ID_MISMATCH: { code: 100304, message: "eventId is mismatch with block chain" },
  /** STOMP SUBSCRIBE only: a start height outside 1..the current height (protocols.md 2.5). */
  BLOCK_HEIGHT_INVALID: { code: 100307, message: "invalid block height" },
  GROUP_ID_INVALID: { code: 100306, message: "event group id should be a string start from 1" },
  /** Not the original's: admin/events without a topic, a pattern, an eventId or both ends of a time range (docs/operations.md). */
  EVENT_SEARCH_UNBOUNDED: {
    code: 100308,
    message: "event search needs a topic (or a +/# pattern), an eventId, or both from and to; narrow the search",
  },
  /** Not the original's: `from`, `to` or `fromTime` is not epoch milliseconds or an ISO-8601 time, or `from` is after `to`. */
  TIME_INVALID: { code: 100309, message: "time should be epoch milliseconds or an ISO-8601 time, and from not after to" },
  /** Not the original's: a search page past the first 10000 matches, or a pattern matching more topics than it may. */
  EVENT_SEARCH_TOO_WIDE: {
    code: 100310,
    message: "event search reaches past the first 10000 matches or 1000 topics; narrow it with a topic, from or to",
  },
  URL_INVALID: { code: 100501, message: "invalid url format" },
  URL_CONNECT_FAILED: { code: 100502, message: "failed to connect url" },
  SUBSCRIPTION_ID_BLANK: { code: 100503, message: "subscribe interface subscription id is blank" },
  SUBSCRIPTION_ID_NOT_EXIST: { code: 100504, message: "subscribe id is not exist" },
  SUBSCRIPTION_ID_FORMAT: { code: 100505, message: "subscribe id format invalid" },
  /** STOMP SUBSCRIBE only: `event-subscriptionId` names a subscription still live (protocols.md 2.5). */
  SUBSCRIPTION_ID_LIVE: { code: 100507, message: "subscriptionId is already exist, can not subscribe again" },
  /** Not the original's: MAX_SUBSCRIPTIONS_PER_CALLER live subscriptions per API key, or per address without keys. */
  SUBSCRIPTION_LIMIT: { code: 100510, message: "subscriptions of this caller reach the limit; unsubscribe some first" },
  /** Not the original's: admin/resendEvent of an event the subscription's topic or pattern does not match. */
  EVENT_NOT_MATCHED: { code: 100511, message: "the event's topic does not match the subscription's topic" },
  /** Not the original's: admin/replayDeadLetters given both fromTime and fromEventId, or either without a subscriptionId. */
  REPLAY_POSITION_INVALID: {
    code: 100512,
    message: "replay from a position needs a subscriptionId and one of fromTime or fromEventId",
  },
  /**
   * Not the original's: a subscription setting (admin/subscriptionSettings, or beside subscribe's
   * parameters) that is not a number within its bounds, or `paused` not true or false
   * (docs/delivery.md, "Settings per subscription").
   */
  SETTING_INVALID: {
    code: 100513,
    message:
      "subscription setting is invalid: maxRate 0.01-10000, retryMaxAttempts 1-100, retryBaseMs 1-86400000, retryMaxMs 1-604800000, deliveryWindow 1-256, secretGraceMs 0-2592000000, paused true or false",
  },
  /** Not the original's: settings that contradict each other (retryBaseMs above retryMaxMs, or rotateSecret with dropSecret). */
  SETTING_CONFLICT: {
    code: 100514,
    message: "subscription settings conflict: retryBaseMs above retryMaxMs, or rotateSecret with dropSecret",
  },
  /**
   * Not the original's: subscribe given `verify` (true or false) with a callback URL whose host
   * resolves only to addresses the outbound policy refuses. Without `verify`, 100502 as the
   * original answered (docs/delivery.md, "Subscribing without a live receiver").
   */
  URL_NOT_ALLOWED: {
    code: 100515,
    message: "callback url is not allowed: its host resolves only to addresses the outbound policy refuses (CALLBACK_ALLOWED_CIDRS)",
  },
  /** Not the original's: subscribe's `verify` that is neither true nor false. */
  VERIFY_INVALID: { code: 100516, message: "verify should be true or false" },
  /** Not the original's: a subscription's `headers` setting that is no JSON object of allowed names to short strings (custom-headers.ts). */
  HEADERS_INVALID: {
    code: 100517,
    message:
      "headers should be a JSON object of at most 20 names to string values (printable ASCII, 1024 characters each, 4096 in all); no hop-by-hop, host, user-agent, content-*, webhook-* or evb-* names",
  },
  /** Not the original's: a subscription's `bodyMode` that is neither envelope nor raw. */
  BODY_MODE_INVALID: { code: 100518, message: "bodyMode should be envelope or raw" },
  /** Not the original's: a subscription's `filter` outside the content filter's small language (content-filter.ts). */
  FILTER_INVALID: {
    code: 100519,
    message:
      'filter should be a JSON array of 1-10 conditions {"path":"a.b.0","equals":x}, {"path":…,"in":[x,…]} or {"path":…,"exists":true|false}; paths of 1-8 dotted names, values strings, numbers, booleans or null',
  },
  INVALID_INPUT_PARAM: { code: 200001, message: "invalid input param" },
  TRANSACTION_TIMEOUT: { code: 200201, message: "the transaction is timeout." },
  TRANSACTION_FAILED: { code: 200202, message: "the transaction does not correctly executed." },
  HEIGHT_READ_FAILED: {
    code: 200205,
    message: "get block height failed due to InterruptedException|ExecutionException|TimeoutException|RuntimeException",
  },
  UNKNOWN_GROUP: { code: 200211, message: "unknown group id" },
  RPC_FAILED: { code: 200214, message: "we3sdk's rpc failed" },
  NODE_IP_LIST_NULL: { code: -1, message: "node ipList is null." },
  PAGE_INDEX_ERROR: { code: -1, message: "pageIndex error." },
} as const satisfies Record<string, { code: number; message: string }>;

export type BrokerErrorName = keyof typeof BROKER_ERRORS;

/** Generic codes whose message is the underlying failure's own text. */
export const GENERIC_CODE = { modern: 200000, legacy: 200203 } as const;

/**
 * An expected, client-visible failure: it becomes the broker-exception object in the
 * variant's shape. `message` may be null only for the generic codes.
 */
export class BrokerError extends Error {
  readonly code: number;
  readonly wireMessage: string | null;

  constructor(code: number, message: string | null, options?: { cause?: unknown }) {
    super(message ?? `broker error ${code}`, options);
    this.name = "BrokerError";
    this.code = code;
    this.wireMessage = message;
  }

  static of(name: BrokerErrorName, options?: { cause?: unknown }): BrokerError {
    const e = BROKER_ERRORS[name];
    return new BrokerError(e.code, e.message, options);
  }
}
