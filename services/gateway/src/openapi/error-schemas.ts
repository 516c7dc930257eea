import { BROKER_ERRORS, type BrokerErrorName, GENERIC_CODE, type Variant } from "@evb/domain";

type JsonSchema = Record<string, unknown>;

/** Component name of an error in a variant's shape, e.g. `L.Error.TOPIC_NOT_EXIST`; `GENERIC` for the generic code. */
export function errorComponentName(v: Variant, name: BrokerErrorName | "GENERIC"): string {
  return `${v}.Error.${name}`;
}

/**
 * The broker-exception object of one error in the variant's shape (replies.ts `errorBody`):
 * `{code, message, data: null}` in L, `{code, message}` in M and E, with the exact code and
 * wire message. The generic code (L 200000, M/E 200203) carries the underlying failure's text.
 */
function errorSchema(v: Variant, name: BrokerErrorName | "GENERIC"): JsonSchema {
  const generic = name === "GENERIC";
  const code = generic ? (v === "L" ? GENERIC_CODE.modern : GENERIC_CODE.legacy) : BROKER_ERRORS[name].code;
  const message = generic
    ? { type: ["string", "null"], description: "The underlying failure's text (missing parameter, type mismatch, service unavailable)" }
    : { const: BROKER_ERRORS[name].message };
  const properties: Record<string, unknown> = { code: { type: "integer", const: code }, message };
  if (v === "L") properties.data = { type: "null" };
  return {
    type: "object",
    title: `${code} ${generic ? "generic" : name}`,
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

/** Every error component of the three variants, for `components.schemas`. */
export function allErrorComponents(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const v of ["L", "M", "E"] as const) {
    out[errorComponentName(v, "GENERIC")] = errorSchema(v, "GENERIC");
    for (const name of Object.keys(BROKER_ERRORS) as BrokerErrorName[]) out[errorComponentName(v, name)] = errorSchema(v, name);
  }
  return out;
}
