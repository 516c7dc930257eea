import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressPolicy, parseCidrList } from "@evb/domain";
import { type HostLookup, parseCallbackUrl } from "@evb/subscriptions";
import { checkConnectivity } from "../../services/gateway/src/subscriptions/connectivity-check.ts";
import { CallbackTransport } from "../../services/notifier/src/delivery/callback-transport.ts";
import { Receiver } from "../support/receiver.ts";

/** A DNS port with fixed answers, standing in for names an attacker controls. */
const fakeDns: HostLookup = async (host) => {
  const table: Record<string, { address: string; family: 4 | 6 }[]> = {
    "internal.test": [{ address: "10.1.2.3", family: 4 }],
    "metadata.test": [{ address: "169.254.169.254", family: 4 }],
    "v6.test": [{ address: "fd00::1", family: 6 }],
    "loop.test": [{ address: "127.0.0.1", family: 4 }],
  };
  const hit = table[host];
  if (!hit) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return hit;
};

const publicOnly = new AddressPolicy([]);
const loopbackAllowed = new AddressPolicy(parseCidrList("127.0.0.0/8"));

// Crash survived: none (delivery-time and subscribe-time address checks over real sockets).
describe("outbound safety of callback delivery", () => {
  let rx: Receiver;
  let port: string;
  beforeAll(async () => {
    rx = await Receiver.start();
    port = new URL(rx.url()).port;
  });
  afterAll(async () => {
    await rx?.close();
  });

  const transport = (policy: AddressPolicy, timeoutMs = 2000) =>
    new CallbackTransport({ policy, timeoutMs, lookup: fakeDns, userAgent: "test" });

  it("re-resolves at delivery and refuses names that resolve to private, metadata or unique-local addresses", async () => {
    const t = transport(publicOnly);
    for (const [host, reason] of [
      ["internal.test", "10.1.2.3 is private"],
      ["metadata.test", "169.254.169.254 is metadata"],
      ["v6.test", "fd00::1 is unique-local"],
      ["loop.test", "127.0.0.1 is loopback"],
    ]) {
      const r = await t.post(`http://${host}:${port}/cb`, "{}", {});
      expect(r, host).toMatchObject({ delivered: false, status: null });
      expect(!r.delivered && r.error).toContain(reason);
    }
    for (const url of [rx.url(), `http://[::1]:${port}/cb`, "http://169.254.169.254/", "http://10.0.0.1/"]) {
      expect((await t.post(url, "{}", {})).delivered, url).toBe(false);
    }
    expect(rx.requests).toHaveLength(0);
    t.close();
  });

  it("dials the checked address with the URL's Host header when the range is allowed", async () => {
    const t = transport(loopbackAllowed);
    const r = await t.post(`http://loop.test:${port}/cb?x=1`, '{"a":1}', { "webhook-id": "w1" });
    expect(r).toEqual({ delivered: true, status: 200, excerpt: "ok" });
    const got = rx.requests.at(-1);
    expect(got).toMatchObject({ method: "POST", path: "/cb?x=1", body: '{"a":1}' });
    expect(got?.headers.host).toBe(`loop.test:${port}`);
    expect(got?.headers["webhook-id"]).toBe("w1");
    t.close();
  });

  it("does not follow redirects, and bounds an attempt by its timeout", async () => {
    const t = transport(loopbackAllowed, 300);
    rx.answer = () => ({ status: 307, headers: { location: rx.url("/moved") } });
    const before = rx.requests.length;
    expect(await t.post(rx.url(), "{}", {})).toMatchObject({ delivered: false, status: 307, error: "HTTP 307" });
    expect(rx.requests.length - before).toBe(1);
    rx.answer = () => ({ status: 200, delayMs: 1500 });
    const slow = await t.post(rx.url(), "{}", {});
    expect(slow.delivered).toBe(false);
    expect(!slow.delivered && slow.error).toContain("timed out");
    rx.answer = () => ({ status: 200 });
    t.close();
  });

  it("subscribe's connectivity check uses the same policy and never dials a refused address", async () => {
    const target = (u: string) => parseCallbackUrl(u) as NonNullable<ReturnType<typeof parseCallbackUrl>>;
    expect(
      await checkConnectivity(target(`http://internal.test:${port}/`), { policy: publicOnly, timeoutMs: 1000, lookup: fakeDns }),
    ).toMatchObject({
      ok: false,
    });
    expect(await checkConnectivity(target(rx.url()), { policy: publicOnly, timeoutMs: 1000 })).toMatchObject({ ok: false });
    expect(await checkConnectivity(target(rx.url()), { policy: loopbackAllowed, timeoutMs: 1000 })).toEqual({
      ok: true,
      address: "127.0.0.1",
    });
    expect(await checkConnectivity(target("http://127.0.0.1:1/"), { policy: loopbackAllowed, timeoutMs: 1000 })).toMatchObject({
      ok: false,
    });
  });

  it("bounds the connectivity check: a TLS handshake that never completes fails after the timeout", async () => {
    // Accepts TCP and then says nothing, as a black-holed TLS endpoint would.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    const target = parseCallbackUrl(`https://127.0.0.1:${silentPort}/`) as NonNullable<ReturnType<typeof parseCallbackUrl>>;
    const r = await checkConnectivity(target, { policy: loopbackAllowed, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false });
    expect(!r.ok && r.reason).toContain("timed out");
    silent.close();
  });
});
