import { BrokerError } from "@evb/domain";

/**
 * How subscribe checks its callback URL (behaviour.md 8.1 step 5): "legacy" without a `verify`
 * parameter (the original's check and its one code), "verify" with `verify=true`, "policy-only"
 * with `verify=false` (the receiver need not be up; the address policy still applies).
 */
export type ReachMode = "legacy" | "verify" | "policy-only";

/** The mode from subscribe's `verify` parameter (undefined: absent). VERIFY_INVALID for anything but true/false. */
export function reachMode(raw: string | undefined): ReachMode {
  if (raw === undefined) return "legacy";
  const v = raw.trim().toLowerCase();
  if (v === "true") return "verify";
  if (v === "false") return "policy-only";
  throw BrokerError.of("VERIFY_INVALID");
}

/** What the check of the callback found: reached, refused by the address policy, or not reachable now. */
export type ReachOutcome = "reached" | "refused" | "unreachable";

/**
 * The error subscribe answers for an outcome, null to go on. Without `verify` both failures are
 * 100502, as the original answered (its message is fixed by behaviour.md 3.1, so it cannot tell
 * them apart); a caller who sends `verify` opts into the extension code 100515 for a refused
 * address, and with `verify=false` a receiver that is down now is accepted.
 */
export function reachError(mode: ReachMode, outcome: ReachOutcome): BrokerError | null {
  if (outcome === "reached") return null;
  if (mode === "legacy") return BrokerError.of("URL_CONNECT_FAILED");
  if (outcome === "refused") return BrokerError.of("URL_NOT_ALLOWED");
  return mode === "verify" ? BrokerError.of("URL_CONNECT_FAILED") : null;
}
