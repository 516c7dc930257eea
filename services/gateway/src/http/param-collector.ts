/** Raw parameters: query string and body merged, each name with all its values in order. */
export type RawParams = Map<string, string[]>;

/**
 * Most name/value pairs one request may carry (query string and body together). The servlet
 * container under the original (Tomcat's `maxParameterCount`) had the same default; a request
 * over it is refused with a message rather than cut short, which would turn a later `topic`
 * into a missing parameter without saying why.
 */
export const MAX_PARAMETERS = 10_000;

/** Why a request's parameters could not be read; the caller turns it into the variant's error. */
export type ParamFailureKind =
  | "too-many-parameters"
  | "body-too-large"
  | "malformed-multipart"
  /** A JSON body (an operation declaring `body: "json"`) that is not JSON, or nested deeper than MAX_JSON_DEPTH. */
  | "malformed-json"
  | "unreadable-body"
  /** The connection's framing broke inside the body (llhttp refused a chunk size, say): answered 400, connection closed. */
  | "bad-framing"
  /** The body did not arrive within HTTP_REQUEST_TIMEOUT_MS: answered 408, connection closed. */
  | "body-timeout"
  /** More body chunks than the gateway parses (body-guard.ts): the variant's generic error, connection closed. */
  | "too-many-chunks";

export class ParamReadError extends Error {
  readonly kind: ParamFailureKind;
  constructor(kind: ParamFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ParamReadError";
    this.kind = kind;
  }
}

/**
 * Gathers name/value pairs in arrival order in O(1) per pair (a Map of arrays, appended in place:
 * the body parser this replaces copied a name's whole list on every repeat, so a body repeating one
 * name was quadratic). Query-string pairs are added before body pairs, which gives behaviour.md
 * 1.2's merge order per name.
 */
export class ParamCollector {
  readonly params: RawParams = new Map();
  private count = 0;
  private readonly limit: number;

  constructor(limit = MAX_PARAMETERS) {
    this.limit = limit;
  }

  add(name: string, value: string): void {
    if (++this.count > this.limit) {
      throw new ParamReadError(
        "too-many-parameters",
        `more than ${this.limit} request parameters (query string and body together); send fewer`,
      );
    }
    const list = this.params.get(name);
    if (list) list.push(value);
    else this.params.set(name, [value]);
  }
}
