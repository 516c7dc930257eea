import { BROKER_ERRORS, BrokerError } from "./errors.ts";
import { EXTENSION_PREFIX } from "./event-content.ts";

/**
 * The brands the wire can be spelt in (BRAND): `event`, the neutral names of the interface
 * description (the default), or `weevent`, the original broker's (protocols.md 8).
 */
export const BRANDS = ["event", "weevent"] as const;
export type Brand = (typeof BRANDS)[number];

const PREFIXES: Record<Brand, string> = { event: EXTENSION_PREFIX, weevent: "weevent-" };
const KEY_INVALID = BROKER_ERRORS.EXTENSION_KEY_INVALID;

/**
 * How this deployment spells the branded identifiers of protocols.md 8: the extension prefix
 * (`event-format` / `weevent-format`, `event-tag`, `event-subscriptionId`, `event-plus`,
 * `event-willmessage`, …: every one of them is the prefix and an unbranded rest) and the texts
 * that name it (100206). The one place that knows both spellings; pure.
 *
 * Events keep their extensions under the names they were sent with; this decides which names
 * are read as extensions on the way in and how stored names are shown on the way out:
 * - rest/publish reads exactly this deployment's prefix (a `weevent-` parameter is an unknown
 *   one, ignored, unless BRAND=weevent; an `event-` one likewise under BRAND=weevent);
 * - STOMP reads the neutral spelling only by default (the wire of interface.md: a `weevent-`
 *   header is an ordinary one, not stored), and both under BRAND=weevent, the original's first
 *   (protocols.md 8 allows accepting both);
 * - replies (getEvent, STOMP MESSAGE) show neutral stored names in this deployment's spelling,
 *   with this deployment's plus key only (`event-plus`, or `weevent-plus`).
 */
export class Spelling {
  readonly brand: Brand;
  /** The extension prefix of this deployment: `event-` or `weevent-`. */
  readonly prefix: string;
  /** The prefixes a STOMP header is read with, the preferred first: `event-`; `weevent-` and `event-` under BRAND=weevent. */
  private readonly headerPrefixes: readonly string[];
  /** The broker-added extension (`event-plus`) as this deployment writes it (getEvent, STOMP MESSAGE). */
  readonly plusKey: string;
  /**
   * The Java class a JSON-RPC broker error names in `data.exceptionTypeName`: the original
   * client's `BrokerException`, which its v1.0 release instantiates from that name (and loads
   * only as `com.webank.weevent.sdk.BrokerException`, BRAND=weevent).
   */
  readonly brokerExceptionClass: string;

  constructor(brand: Brand) {
    this.brand = brand;
    this.prefix = PREFIXES[brand];
    this.headerPrefixes = brand === "event" ? [this.prefix] : [this.prefix, EXTENSION_PREFIX];
    this.plusKey = this.name(`${EXTENSION_PREFIX}plus`);
    this.brokerExceptionClass = `com.webank.${brand}.sdk.BrokerException`;
  }

  /** A neutral name (`event-tag`) in this spelling (`weevent-tag`); a name without the neutral prefix is kept. */
  name(neutral: string): string {
    return neutral.startsWith(EXTENSION_PREFIX) ? this.prefix + neutral.slice(EXTENSION_PREFIX.length) : neutral;
  }

  /** The STOMP headers read for a neutral name, the preferred first: itself; under BRAND=weevent the original's, then itself. */
  spellings(neutral: string): readonly string[] {
    const rest = neutral.startsWith(EXTENSION_PREFIX) ? neutral.slice(EXTENSION_PREFIX.length) : neutral;
    return this.headerPrefixes.map((p) => p + rest);
  }

  /** Whether a rest/publish parameter is an extension: it starts with this deployment's prefix (behaviour.md 7.2). */
  isParameterExtension(name: string): boolean {
    return name.startsWith(this.prefix);
  }

  /** Whether a STOMP SEND header is an extension: `event-…`; under BRAND=weevent `weevent-…` too. */
  isHeaderExtension(name: string): boolean {
    return this.headerPrefixes.some((p) => name.startsWith(p));
  }

  /**
   * Stored extensions as this deployment shows them. Neutral brand: as stored (the same object).
   * BRAND=weevent: `event-x` shown as `weevent-x`, unless `weevent-x` is stored too (then that one).
   */
  shown(extensions: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    if (this.brand === "event") return extensions;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(extensions)) {
      const s = this.name(k);
      if (s === k || !Object.hasOwn(extensions, s)) out[s] = v;
    }
    return out;
  }

  /**
   * The stored keys, in order of preference, whose shown name is the one a header names (a
   * SUBSCRIBE's tag): the header itself under the neutral brand (as before BRAND existed); both
   * spellings under BRAND=weevent, this deployment's first (as `shown` prefers it).
   */
  storedKeys(header: string): readonly string[] {
    const read = this.headerPrefixes.find((p) => header.startsWith(p));
    if (this.brand === "event" || read === undefined) return [header];
    return this.spellings(EXTENSION_PREFIX + header.slice(read.length));
  }

  /**
   * behaviour.md 7.1 step 6: an extension key without a prefix read here is 100206, in this
   * deployment's words (`…startwith weevent-` under BRAND=weevent). No way in collects such a key today.
   */
  checkKeys(extensions: Readonly<Record<string, string>>): BrokerError | null {
    for (const k of Object.keys(extensions)) {
      if (!this.isHeaderExtension(k)) return new BrokerError(KEY_INVALID.code, this.text(KEY_INVALID.message));
    }
    return null;
  }

  /** A wire text with the neutral prefix, where it stands as a word, in this spelling (`…startwith event-`). */
  text(neutral: string): string {
    return neutral.replace(/(^|\s)event-(?=\s|$)/g, `$1${this.prefix}`);
  }
}

/** The neutral spelling: the wire exactly as the interface description writes it (BRAND unset). */
export const NEUTRAL_SPELLING = new Spelling("event");
