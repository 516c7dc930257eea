/**
 * What went wrong with one callback attempt (an HTTP POST to a receiver), as the retry policy
 * needs it. Beside the pg and Kafka classifiers (pg-failure.ts, kafka-failure.ts): this file is
 * the only place that looks at a Node socket error or an HTTP status to pick a kind; nothing
 * reads an error's message text.
 */
export const CALLBACK_FAILURE_KINDS = {
  /** The attempt ran past its deadline (lookup, connect, request or status line). */
  TIMEOUT: { suspends: false },
  /** The host name did not resolve (no such name, or the resolver failed). */
  DNS: { suspends: false },
  /** Nothing listens at the receiver's address (connection refused). */
  REFUSED: { suspends: false },
  /** The connection broke before an answer (reset, broken pipe, closed early). */
  RESET: { suspends: false },
  /** No route to the receiver's network or host. */
  UNREACHABLE: { suspends: false },
  /** The TLS handshake failed (certificate not trusted, expired, wrong name, protocol). */
  TLS: { suspends: false },
  /** The address the host resolves to is refused by the outbound policy, or the URL is unusable. */
  NOT_ALLOWED: { suspends: false },
  /** A 3xx answer: redirects are not followed. */
  REDIRECT: { suspends: false },
  /** A 4xx answer other than 410 and 429. */
  CLIENT_ERROR: { suspends: false },
  /** 410 Gone: the receiver asked to stop; the subscription is suspended at once. */
  GONE: { suspends: true },
  /** 429 Too Many Requests: the receiver asks to slow down (its Retry-After is honoured). */
  THROTTLED: { suspends: false },
  /** A 5xx answer. */
  SERVER_ERROR: { suspends: false },
  /** Any other status (1xx that was final) or a socket error of no known kind. */
  OTHER: { suspends: false },
} as const satisfies Record<string, { suspends: boolean }>;

export type CallbackFailureKind = keyof typeof CALLBACK_FAILURE_KINDS;

/** Only a 2xx answer counts as delivered; anything else (3xx included) is a failed attempt. */
export function isDeliveredStatus(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** The kind of a failed attempt that got an answer (any status that is not 2xx). */
export function classifyHttpStatus(status: number): CallbackFailureKind {
  if (status === 410) return "GONE";
  if (status === 429) return "THROTTLED";
  if (status >= 300 && status <= 399) return "REDIRECT";
  if (status >= 400 && status <= 499) return "CLIENT_ERROR";
  if (status >= 500 && status <= 599) return "SERVER_ERROR";
  return "OTHER";
}

const SOCKET_CODES: Record<string, CallbackFailureKind> = {
  ETIMEDOUT: "TIMEOUT",
  ESOCKETTIMEDOUT: "TIMEOUT",
  ENOTFOUND: "DNS",
  EAI_AGAIN: "DNS",
  EAI_FAIL: "DNS",
  EAI_NONAME: "DNS",
  ENODATA: "DNS",
  ESERVFAIL: "DNS",
  ECONNREFUSED: "REFUSED",
  ECONNRESET: "RESET",
  EPIPE: "RESET",
  ECONNABORTED: "RESET",
  // Node's http client: the socket closed before a whole answer came ("socket hang up").
  UND_ERR_SOCKET: "RESET",
  EHOSTUNREACH: "UNREACHABLE",
  ENETUNREACH: "UNREACHABLE",
  EHOSTDOWN: "UNREACHABLE",
  ENETDOWN: "UNREACHABLE",
};

/** OpenSSL's certificate verification codes (Node puts them in `code` as they are). */
const TLS_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "HOSTNAME_MISMATCH",
]);

/**
 * The kind of a failed attempt that got no answer, from the socket or TLS error's `code`
 * (`ERR_TLS_*` and `ERR_SSL_*` codes, OpenSSL's certificate codes, errno names, resolver
 * codes). Node's "socket hang up" carries `ECONNRESET`. An error without a known code is OTHER.
 */
export function classifyNetworkError(err: unknown): CallbackFailureKind {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return "OTHER";
  const known = SOCKET_CODES[code];
  if (known) return known;
  if (TLS_CODES.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_")) return "TLS";
  return "OTHER";
}

/** Does this kind suspend the subscription at once, retries left or not? */
export function suspendsAtOnce(kind: CallbackFailureKind): boolean {
  return CALLBACK_FAILURE_KINDS[kind].suspends;
}
