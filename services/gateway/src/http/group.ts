import { BrokerError, isBlank, type Variant } from "@evb/domain";
import type { Params } from "./params.ts";

/**
 * The group an operation works on (behaviour.md section 4): absent or blank → "1"; in E a
 * non-integer id is 100306; an id not configured is 200211.
 */
export function resolveGroup(params: Params, known: ReadonlySet<string>): string {
  return groupFromValue(params.variant, params.optional("groupId"), known);
}

export function groupFromValue(variant: Variant, raw: string | undefined, known: ReadonlySet<string>): string {
  if (raw === undefined || isBlank(raw)) return "1";
  if (variant === "E" && !/^[+-]?\d+$/.test(raw)) throw BrokerError.of("GROUP_ID_INVALID");
  if (!known.has(raw)) throw BrokerError.of("UNKNOWN_GROUP");
  return raw;
}
