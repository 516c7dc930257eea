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
 * - STOMP reads both spellings in either brand (protocols.md 8 allows accepting both; the
 *   neutral brand did so before BRAND existed);
 * - replies (getEvent, STOMP MESSAGE) show neutral stored names in this deployment's spelling.
 */
export class Spelling {
  readonly brand: Brand;
  /** The extension prefix of this deployment: `event-` or `weevent-`. */
  readonly prefix: string;
  /** The other brand's prefix: STOMP reads it too. */
  private readonly other: string;
  /** The broker-added extension (`event-plus`) as this deployment writes it. */
  readonly plusKey: string;
  /**
   * The plus headers a STOMP MESSAGE carries: this deployment's, and under the neutral brand the
   * original's as well (the original Java client reads only `weevent-` headers; kept as it was
   * before BRAND existed, so the neutral wire does not change).
   */
  readonly messagePlusKeys: readonly string[];

  constructor(brand: Brand) {
    this.brand = brand;
    this.prefix = PREFIXES[brand];
    this.other = PREFIXES[brand === "event" ? "weevent" : "event"];
    this.plusKey = this.name(`${EXTENSION_PREFIX}plus`);
    this.messagePlusKeys = brand === "event" ? [this.plusKey, `${this.other}plus`] : [this.plusKey];
  }

  /** A neutral name (`event-tag`) in this spelling (`weevent-tag`); a name without the neutral prefix is kept. */
  name(neutral: string): string {
    return neutral.startsWith(EXTENSION_PREFIX) ? this.prefix + neutral.slice(EXTENSION_PREFIX.length) : neutral;
  }

  /** Both spellings of a neutral name, this deployment's first: the STOMP headers read for it. */
  spellings(neutral: string): readonly [string, string] {
    const rest = neutral.startsWith(EXTENSION_PREFIX) ? neutral.slice(EXTENSION_PREFIX.length) : neutral;
    return [this.prefix + rest, this.other + rest];
  }

  /** Whether a rest/publish parameter is an extension: it starts with this deployment's prefix (behaviour.md 7.2). */
  isParameterExtension(name: string): boolean {
    return name.startsWith(this.prefix);
  }

  /** Whether a STOMP SEND header is an extension: it starts with either prefix. */
  isHeaderExtension(name: string): boolean {
    return name.startsWith(this.prefix) || name.startsWith(this.other);
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
    if (this.brand === "event" || !this.isHeaderExtension(header)) return [header];
    const rest = header.slice((header.startsWith(this.prefix) ? this.prefix : this.other).length);
    return [this.prefix + rest, this.other + rest];
  }

  /**
   * behaviour.md 7.1 step 6: an extension key with neither prefix is 100206, in this deployment's
   * words (`…startwith weevent-` under BRAND=weevent). No way in collects such a key today.
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
