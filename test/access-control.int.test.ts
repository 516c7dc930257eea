import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestSystem } from "./support/system.ts";

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

// The original's optional access control (behaviour.md 1.6), off by default. Crash survived: none.
describe("optional IP allow-list and Basic authentication", () => {
  let sys: TestSystem;
  let url: string;
  beforeAll(async () => {
    // The test calls from loopback as if through a proxy there, so loopback is listed as one.
    sys = await TestSystem.start({
      env: { API_ALLOWED_CIDRS: "10.0.0.0/8", API_BASIC_AUTH: "ops:s3cr:et,audit:x", TRUSTED_PROXIES: "loopback" },
    });
    url = `${sys.gatewayUrl}/event-broker/admin/getVersion`;
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("asks for credentials with 401 and accepts each configured user", async () => {
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect((await fetch(url, { headers: { authorization: basic("ops", "wrong") } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: basic("nobody", "s3cr:et") } })).status).toBe(401);
    for (const [u, p] of [
      ["ops", "s3cr:et"],
      ["audit", "x"],
    ] as const) {
      const ok = await fetch(url, { headers: { authorization: basic(u, p) } });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { code: number }).code).toBe(0);
    }
  });

  it("answers 403 with an empty body to a caller outside the allow-list, as seen through X-Forwarded-For", async () => {
    const auth = basic("ops", "s3cr:et");
    const outside = await fetch(url, { headers: { authorization: auth, "x-forwarded-for": "203.0.113.9" } });
    expect(outside.status).toBe(403);
    expect(await outside.text()).toBe("");
    const inside = await fetch(url, { headers: { authorization: auth, "x-forwarded-for": "10.1.2.3" } });
    expect(inside.status).toBe(200);
    // Loopback is always allowed.
    expect((await fetch(url, { headers: { authorization: auth } })).status).toBe(200);
  });

  it("an X-Forwarded-For value such as 127.evil.example counted as loopback: refused like any outsider", async () => {
    const auth = basic("ops", "s3cr:et");
    for (const forged of ["127.evil.example", "127.0.0.1.nip.io", "::1.evil"]) {
      const r = await fetch(url, { headers: { authorization: auth, "x-forwarded-for": forged } });
      expect(r.status, forged).toBe(403);
    }
  });

  it("keeps /health open for orchestrators", async () => {
    expect((await fetch(`${sys.gatewayUrl}/health`)).status).toBe(200);
  });
});

/** An address of this machine that is not loopback, unique-local IPv6 first (the ranges once trusted as proxies). */
function nonLoopbackAddress(): string {
  const all = Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && !a.internal && !a.address.startsWith("fe80"));
  const ula = all.find((a) => a?.family === "IPv6" && /^f[cd]/i.test(a.address));
  const pick = ula ?? all.find((a) => a?.family === "IPv4") ?? all[0];
  if (!pick) throw new Error("this machine has no non-loopback address to call the gateway from");
  return pick.address;
}

// Crash survived: none. A direct caller that is not one of TRUSTED_PROXIES cannot pass the
// allow-list by claiming an allowed address in X-Forwarded-For; a listed proxy can vouch for one.
describe("X-Forwarded-For is believed only from TRUSTED_PROXIES", () => {
  const from = nonLoopbackAddress();
  const host = from.includes(":") ? `[${from}]` : from;
  const systems: TestSystem[] = [];
  afterAll(async () => {
    await Promise.all(systems.map((s) => s.stop()));
  });
  const start = async (trusted: string) => {
    const sys = await TestSystem.start({ env: { API_ALLOWED_CIDRS: "10.0.0.0/8" }, gatewayEnv: { HOST: "::", TRUSTED_PROXIES: trusted } });
    systems.push(sys);
    const port = new URL(sys.gatewayUrl).port;
    return `http://${host}:${port}/event-broker/admin/getVersion`;
  };

  it(`a caller on ${from} that is not a trusted proxy is judged by its own address`, async () => {
    const url = await start("loopback");
    const spoofed = await fetch(url, { headers: { "x-forwarded-for": "10.1.2.3" } });
    expect(spoofed.status).toBe(403);
    expect((await fetch(url)).status).toBe(403);
  });

  it(`the same caller, listed in TRUSTED_PROXIES, vouches for the client it forwards`, async () => {
    const url = await start(`loopback,${from}`);
    expect((await fetch(url, { headers: { "x-forwarded-for": "10.1.2.3" } })).status).toBe(200);
    expect((await fetch(url, { headers: { "x-forwarded-for": "203.0.113.9" } })).status).toBe(403);
  });
});
