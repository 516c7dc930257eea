import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { AddressPolicy } from "@evb/domain";

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** The DNS port: every address a host name resolves to. */
export type HostLookup = (host: string) => Promise<ResolvedAddress[]>;

export const systemLookup: HostLookup = async (host) => {
  const all = await dnsLookup(host, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * `refused`: the host resolved, but only to addresses the policy refuses ("not allowed"); false
 * when it did not resolve at all ("unreachable now"), which subscribe's `verify=false` accepts.
 */
export type ResolveResult = { ok: true; addresses: ResolvedAddress[] } | { ok: false; reason: string; refused: boolean };

/**
 * Resolves a callback host and keeps only the addresses the policy allows. Callers dial one of
 * the returned addresses themselves (never the name again), so a name that re-resolves to an
 * internal address between the check and the connection (DNS rebinding) gains nothing. Fails
 * when the name does not resolve or every address is refused; the reason names the refused range.
 */
export async function resolveCallbackHost(host: string, policy: AddressPolicy, lookup: HostLookup = systemLookup): Promise<ResolveResult> {
  const family = isIP(host);
  let candidates: ResolvedAddress[];
  if (family !== 0) {
    candidates = [{ address: host, family: family === 6 ? 6 : 4 }];
  } else {
    try {
      candidates = await lookup(host);
    } catch (err) {
      return { ok: false, refused: false, reason: `cannot resolve ${host}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
    }
  }
  const allowed: ResolvedAddress[] = [];
  let refused = "";
  for (const c of candidates) {
    const verdict = policy.check(c.address);
    if (verdict.ok) allowed.push(c);
    else refused ||= `${c.address} is ${verdict.reason}`;
  }
  if (allowed.length > 0) return { ok: true, addresses: allowed };
  if (refused) return { ok: false, refused: true, reason: `refused: ${refused} (see CALLBACK_ALLOWED_CIDRS)` };
  return { ok: false, refused: false, reason: `${host} has no address` };
}
