import { BrokerError, GENERIC_CODE, isBlank, isJavaWhitespace, parseJavaInteger, type Variant } from "@evb/domain";
import type { RawParams } from "./param-collector.ts";

/** The generic code of a variant: 200000 in L, 200203 in M (early form) and E. */
export function genericCode(variant: Variant): number {
  return variant === "L" ? GENERIC_CODE.modern : GENERIC_CODE.legacy;
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

/**
 * Typed access to one request's parameters with the original framework's rules: a missing
 * required parameter and an unconvertible integer are the generic code with Spring's message;
 * an empty integer is null so that the operation's own range check answers.
 */
export class Params {
  readonly raw: RawParams;
  readonly variant: Variant;
  /**
   * publish's extensions given as one map (JSON-RPC's `extensions` argument), checked as they are
   * (a key without the prefix is 100206); undefined: collected from the prefixed parameters.
   */
  readonly extensions: Readonly<Record<string, string>> | undefined;

  /** The parsed JSON body of an operation declaring `body: "json"` (json-body.ts); undefined otherwise. */
  readonly json: unknown;

  constructor(raw: RawParams, variant: Variant, extensions?: Readonly<Record<string, string>>, json?: unknown) {
    this.raw = raw;
    this.variant = variant;
    this.extensions = extensions;
    this.json = json;
  }

  has(name: string): boolean {
    return this.raw.has(name);
  }

  /** Other operations see repeated values joined with ","; publish takes the first. */
  optional(name: string): string | undefined {
    const v = this.raw.get(name);
    return v === undefined ? undefined : v.join(",");
  }

  first(name: string): string | undefined {
    return this.raw.get(name)?.[0];
  }

  required(name: string): string {
    const v = this.optional(name);
    if (v === undefined) throw this.missing(name, "String");
    return v;
  }

  /** Required Integer: absent → missing; blank → null; not an integer → type mismatch. */
  requiredInt(name: string): number | null {
    const v = this.optional(name);
    if (v === undefined) throw this.missing(name, "Integer");
    return this.toInt(v);
  }

  /** Optional Integer: absent or blank → null. */
  optionalInt(name: string): number | null {
    const v = this.optional(name);
    return v === undefined ? null : this.toInt(v);
  }

  private toInt(value: string): number | null {
    // Spring trims with Character.isWhitespace (no-break spaces stay) and quotes the trimmed text.
    // Only a truly empty value converts to null; whitespace alone trims to "" and then fails
    // Integer parsing, as Spring's StringToNumber conversion does.
    if (value === "") return null;
    const t = [...value].filter((ch) => !isJavaWhitespace(ch.charCodeAt(0))).join("");
    let n: number;
    const dec = parseJavaInteger(t);
    if (dec !== null) n = Number(dec);
    else if (/^-?(0x|0X|#)[0-9a-fA-F]+$/.test(t)) n = (t.startsWith("-") ? -1 : 1) * Number.parseInt(t.replace(/^-?(0x|0X|#)/, ""), 16);
    else n = Number.NaN;
    if (!Number.isSafeInteger(n) || n < INT_MIN || n > INT_MAX) {
      throw new BrokerError(
        genericCode(this.variant),
        `Failed to convert value of type 'java.lang.String' to required type 'java.lang.Integer'; nested exception is java.lang.NumberFormatException: For input string: "${t}"`,
      );
    }
    return n;
  }

  private missing(name: string, type: "String" | "Integer"): BrokerError {
    return new BrokerError(genericCode(this.variant), `Required ${type} parameter '${name}' is not present`);
  }
}

/** An optional parameter with a blank value read as absent (the extensions' rule). */
export function nonBlank(params: Params, name: string): string | undefined {
  const v = params.optional(name);
  return v === undefined || isBlank(v) ? undefined : v;
}
