import { describe, expect, it } from "vitest";
import { AddressPolicy, parseCidrList, restrictedReason } from "./address-policy.ts";

describe("restrictedReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["169.254.169.254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["168.63.129.16", "metadata"],
    ["169.254.1.1", "link-local"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["192.0.2.10", "documentation"],
    ["198.51.100.7", "documentation"],
    ["203.0.113.99", "documentation"],
    ["198.18.0.1", "benchmark"],
    ["198.19.255.255", "benchmark"],
    ["192.0.0.192", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["0:0:0:0:0:0:0:0", "unspecified"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf:ffff::1", "link-local"],
    ["fec0::1", "site-local"],
    ["fc00::", "unique-local"],
    ["fc00::1", "unique-local"],
    ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique-local"],
    ["fd00:ec2::254", "metadata"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001:2::1", "benchmark"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "reserved"], // Teredo
    ["100::1", "reserved"],
    ["::2", "reserved"],
    ["4000::1", "reserved"], // outside global unicast 2000::/3
    ["::ffff:127.0.0.1", "ipv4-mapped:loopback"],
    ["::ffff:7f00:1", "ipv4-mapped:loopback"],
    ["0:0:0:0:0:ffff:a00:1", "ipv4-mapped:private"],
    ["::ffff:169.254.169.254", "ipv4-mapped:metadata"],
    ["::ffff:0.0.0.0", "ipv4-mapped:unspecified"],
    ["::127.0.0.1", "ipv4-compatible:loopback"],
    ["::8.8.8.8", "reserved"],
    ["64:ff9b::7f00:1", "nat64:loopback"],
    ["64:ff9b::192.168.0.1", "nat64:private"],
    ["64:ff9b:1::a00:1", "nat64-local"],
    ["2002:7f00:1::", "6to4:loopback"],
    ["2002:a9fe:a9fe::1", "6to4:metadata"],
    ["[::1]", "loopback"],
    ["localhost", "invalid"],
    ["", "invalid"],
    ["127.1", "invalid"],
  ])("%s → %s", (ip, reason) => {
    expect(restrictedReason(ip)).toBe(reason);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "172.15.255.255",
    "100.63.255.255",
    "100.128.0.1",
    "169.253.255.255",
    "192.169.0.1",
    "223.255.255.255",
    "2001:4860:4860::8888",
    "2606:4700:4700::1111",
    "[2001:4860:4860::8888]",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("%s is public", (ip) => {
    expect(restrictedReason(ip)).toBeNull();
  });
});

describe("parseCidrList", () => {
  it("parses ranges and bare addresses of both families", () => {
    expect(parseCidrList("127.0.0.0/8,::1/128,10.1.2.3, fd00::/8 ,::1")).toEqual([
      { address: "127.0.0.0", prefix: 8, family: "ipv4" },
      { address: "::1", prefix: 128, family: "ipv6" },
      { address: "10.1.2.3", prefix: 32, family: "ipv4" },
      { address: "fd00::", prefix: 8, family: "ipv6" },
      { address: "::1", prefix: 128, family: "ipv6" },
    ]);
  });

  it("reads an empty or blank list as no ranges", () => {
    expect(parseCidrList("")).toEqual([]);
    expect(parseCidrList("  ")).toEqual([]);
    expect(parseCidrList("10.0.0.0/8,")).toHaveLength(1);
  });

  it.each([
    ["localhost", /"localhost".*not an IP address/],
    ["10.0.0.0/33", /"10\.0\.0\.0\/33".*bad prefix "\/33"/],
    ["::1/129", /bad prefix "\/129"/],
    ["10.0.0.0/", /bad prefix "\/"/],
    ["10.0.0.0/-1", /bad prefix/],
    ["10.0.0.0/8/8", /bad prefix "\/8\/8"/],
    ["10.0.0.0/ 8", /bad prefix/],
    ["10.0.0.0/0x8", /bad prefix/],
    ["127.0.0.0/8;10.0.0.0/8", /bad prefix "\/8;10.0.0.0\/8".*comma-separated/],
    ["300.0.0.1", /not an IP address/],
    ["fe80::1%eth0/64", /zone ids/],
  ])("rejects %j with a message naming the entry and the form", (spec, message) => {
    expect(() => parseCidrList(`127.0.0.0/8,${spec}`)).toThrow(message);
    expect(() => parseCidrList(spec)).toThrow(/expected an IPv4 or IPv6 address with an optional \/prefix/);
  });
});

describe("AddressPolicy", () => {
  it("allows public addresses with an empty allowlist and names the reason otherwise", () => {
    const policy = new AddressPolicy([]);
    expect(policy.check("8.8.8.8")).toEqual({ ok: true });
    expect(policy.check("2001:4860:4860::8888")).toEqual({ ok: true });
    expect(policy.check("127.0.0.1")).toEqual({ ok: false, reason: "loopback" });
    expect(policy.check("::ffff:7f00:1")).toEqual({ ok: false, reason: "ipv4-mapped:loopback" });
  });

  it("allowlist 127.0.0.0/8 opens 127.0.0.1 but not 10.0.0.1", () => {
    const policy = new AddressPolicy(parseCidrList("127.0.0.0/8"));
    expect(policy.check("127.0.0.1")).toEqual({ ok: true });
    expect(policy.check("127.9.9.9")).toEqual({ ok: true });
    expect(policy.check("::ffff:127.0.0.1")).toEqual({ ok: true });
    expect(policy.check("10.0.0.1")).toEqual({ ok: false, reason: "private" });
    expect(policy.check("::1")).toEqual({ ok: false, reason: "loopback" });
    expect(policy.check("169.254.169.254")).toEqual({ ok: false, reason: "metadata" });
  });

  it("allowlists IPv6 ranges and single addresses", () => {
    const policy = new AddressPolicy(parseCidrList("::1,fd12::/16,10.1.2.3"));
    expect(policy.check("::1")).toEqual({ ok: true });
    expect(policy.check("[::1]")).toEqual({ ok: true });
    expect(policy.check("fd12:3::4")).toEqual({ ok: true });
    expect(policy.check("fd13::4")).toEqual({ ok: false, reason: "unique-local" });
    expect(policy.check("10.1.2.3")).toEqual({ ok: true });
    expect(policy.check("10.1.2.4")).toEqual({ ok: false, reason: "private" });
    expect(policy.check("127.0.0.1")).toEqual({ ok: false, reason: "loopback" });
  });

  it("never allows something that is not an address, even with 0.0.0.0/0 allowlisted", () => {
    const policy = new AddressPolicy(parseCidrList("0.0.0.0/0,::/0"));
    expect(policy.check("localhost")).toEqual({ ok: false, reason: "invalid" });
    expect(policy.check("10.0.0.1")).toEqual({ ok: true });
  });
});
