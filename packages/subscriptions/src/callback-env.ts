import { parsedVar } from "@evb/config";
import { AddressPolicy, type Cidr, parseCidrList } from "@evb/domain";

/**
 * Outbound-safety settings shared by the gateway (subscribe-time check) and the notifier
 * (delivery-time check), spread into each service's config schema so both refuse the same hosts.
 */
export const callbackEnv = {
  CALLBACK_ALLOWED_CIDRS: parsedVar(
    parseCidrList,
    "",
    "comma-separated IPv4/IPv6 ranges callbacks may reach although not public, e.g. 127.0.0.0/8,::1/128 for local receivers; empty = public addresses only",
  ),
};

export function addressPolicy(config: { CALLBACK_ALLOWED_CIDRS: Cidr[] }): AddressPolicy {
  return new AddressPolicy(config.CALLBACK_ALLOWED_CIDRS);
}
