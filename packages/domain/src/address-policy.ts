import { BlockList, isIP } from "node:net";

/** One allowlisted range; `address` as written in the list (host bits may be set). */
export interface Cidr {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

const CIDR_FORM =
  "expected an IPv4 or IPv6 address with an optional /prefix (0-32 for IPv4, 0-128 for IPv6), comma-separated, e.g. 127.0.0.0/8,::1/128";

/** Parses "127.0.0.0/8,::1/128,10.1.2.3" (bare address = /32 or /128). Throws Error naming the bad entry and the expected form. Empty string → []. */
export function parseCidrList(spec: string): Cidr[] {
  const out: Cidr[] = [];
  for (const raw of spec.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const slash = entry.indexOf("/");
    const address = slash < 0 ? entry : entry.slice(0, slash);
    const version = isIP(address);
    if (version === 0) throw new Error(`Invalid address range "${entry}": "${address}" is not an IP address; ${CIDR_FORM}`);
    const max = version === 4 ? 32 : 128;
    let prefix = max;
    if (slash >= 0) {
      const text = entry.slice(slash + 1);
      prefix = /^\d{1,3}$/.test(text) ? Number(text) : Number.NaN;
      if (!(prefix >= 0 && prefix <= max)) throw new Error(`Invalid address range "${entry}": bad prefix "/${text}"; ${CIDR_FORM}`);
    }
    if (address.includes("%")) throw new Error(`Invalid address range "${entry}": zone ids are not allowed; ${CIDR_FORM}`);
    out.push({ address, prefix, family: version === 4 ? "ipv4" : "ipv6" });
  }
  return out;
}

// First matching row wins, so narrower rows come before the ranges that contain them.
const IPV4_TABLE: readonly (readonly [string, number, string])[] = [
  ["0.0.0.0", 8, "unspecified"], // "this network"; Linux connects 0.0.0.0 to the local host
  ["10.0.0.0", 8, "private"],
  ["100.100.100.200", 32, "metadata"], // Alibaba Cloud metadata, inside the CGNAT range
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.169.254", 32, "metadata"], // AWS, GCP, Azure, OpenStack metadata
  ["169.254.0.0", 16, "link-local"],
  ["168.63.129.16", 32, "metadata"], // Azure platform endpoint, public-looking but host-local
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"], // IETF protocol assignments (includes Oracle's 192.0.0.192)
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"], // deprecated 6to4 relay anycast
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmark"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["255.255.255.255", 32, "broadcast"],
  ["240.0.0.0", 4, "reserved"],
];

const IPV6_TABLE: readonly (readonly [string, number, string])[] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::", 8, "reserved"], // after the embedded-IPv4 forms, which are handled before the table
  ["100::", 64, "reserved"], // discard-only
  ["2001:2::", 48, "benchmark"],
  ["2001::", 23, "reserved"], // IETF protocol assignments, Teredo, ORCHID
  ["2001:db8::", 32, "documentation"],
  ["3fff::", 20, "documentation"],
  ["5f00::", 16, "reserved"], // SRv6 SIDs
  ["fd00:ec2::254", 128, "metadata"], // AWS metadata over IPv6, inside unique-local
  ["fc00::", 7, "unique-local"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local"],
  ["ff00::", 8, "multicast"],
];

function compile(table: readonly (readonly [string, number, string])[], type: "ipv4" | "ipv6"): [BlockList, string][] {
  return table.map(([address, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(address, prefix, type);
    return [list, reason];
  });
}

const IPV4_RANGES = compile(IPV4_TABLE, "ipv4");
const IPV6_RANGES = compile(IPV6_TABLE, "ipv6");
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet("2000::", 3, "ipv6");

/** Strips the brackets a URL puts around IPv6 hosts and any zone id ("fe80::1%eth0"). */
function bareAddress(ip: string): string {
  let s = ip.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  return zone < 0 ? s : s.slice(0, zone);
}

/** The 8 16-bit groups of a valid IPv6 address (validated by isIP beforehand). */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    // A dotted IPv4 tail is two groups written differently: rewrite it as hex first.
    const [a, b, c, d] = text
      .slice(lastColon + 1)
      .split(".")
      .map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const gap = text.indexOf("::");
  if (gap < 0) return parse(text);
  const head = parse(text.slice(0, gap));
  const rest = parse(text.slice(gap + 2));
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest];
}

function ipv4From(high: number, low: number): string {
  return `${high >>> 8}.${high & 0xff}.${low >>> 8}.${low & 0xff}`;
}

function ipv4Reason(ip: string): string | null {
  for (const [list, reason] of IPV4_RANGES) if (list.check(ip, "ipv4")) return reason;
  return null;
}

/** Addresses that carry an IPv4 destination inside IPv6: judged by the IPv4 they lead to. */
function embeddedReason(g: number[]): string | null | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const upperZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (upperZero && g5 === 0xffff) return prefixed("ipv4-mapped", ipv4Reason(ipv4From(g6, g7)));
  if (upperZero && g5 === 0 && g6 !== 0) {
    // Deprecated (RFC 4291) and never routed: reserved even when the IPv4 inside is public.
    return prefixed("ipv4-compatible", ipv4Reason(ipv4From(g6, g7))) ?? "reserved";
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return prefixed("nat64", ipv4Reason(ipv4From(g6, g7)));
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "nat64-local"; // RFC 8215: site-specific translation
  if (g0 === 0x2002) return prefixed("6to4", ipv4Reason(ipv4From(g1, g2)));
  return undefined;
}

function prefixed(kind: string, reason: string | null): string | null {
  return reason === null ? null : `${kind}:${reason}`;
}

/**
 * Why an address is not public, or null when it is public: "loopback", "private", "link-local",
 * "metadata", "unique-local", "unspecified", "multicast", "reserved", "cgnat", "documentation",
 * "benchmark", "broadcast", "site-local", "ipv4-mapped:<reason>", "ipv4-compatible:<reason>",
 * "nat64:<reason>", "nat64-local", "6to4:<reason>", and "invalid" for anything that is not an IP
 * address (so a caller that forgot to resolve a name fails closed). IPv6 outside 2000::/3 is
 * "reserved". Accepts "[v6]" brackets and zone ids.
 */
export function restrictedReason(ip: string): string | null {
  const bare = bareAddress(ip);
  const version = isIP(bare);
  if (version === 4) return ipv4Reason(bare);
  if (version !== 6) return "invalid";
  const groups = ipv6Groups(bare);
  if (groups.every((x) => x === 0)) return "unspecified";
  const embedded = embeddedReason(groups);
  if (embedded !== undefined) return embedded;
  for (const [list, reason] of IPV6_RANGES) if (list.check(bare, "ipv6")) return reason;
  return GLOBAL_UNICAST.check(bare, "ipv6") ? null : "reserved";
}

/** An allow decision: allowed when the address is public, or inside one of the allowlisted ranges. */
export class AddressPolicy {
  readonly #allowed = new BlockList();

  constructor(allowed: readonly Cidr[]) {
    for (const c of allowed) this.#allowed.addSubnet(c.address, c.prefix, c.family);
  }

  check(ip: string): { ok: true } | { ok: false; reason: string } {
    const reason = restrictedReason(ip);
    if (reason === null) return { ok: true };
    if (reason === "invalid") return { ok: false, reason };
    const bare = bareAddress(ip);
    // BlockList also matches IPv4 rules against ::ffff:a.b.c.d, the same destination.
    if (this.#allowed.check(bare, isIP(bare) === 4 ? "ipv4" : "ipv6")) return { ok: true };
    return { ok: false, reason };
  }
}
