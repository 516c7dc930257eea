import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestSystem } from "./support/system.ts";

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

// The original's optional access control (behaviour.md 1.6), off by default. Crash survived: none.
describe("optional IP allow-list and Basic authentication", () => {
  let sys: TestSystem;
  let url: string;
  beforeAll(async () => {
    sys = await TestSystem.start({ env: { API_ALLOWED_CIDRS: "10.0.0.0/8", API_BASIC_AUTH: "ops:s3cr:et,audit:x" } });
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

  it("keeps /health open for orchestrators", async () => {
    expect((await fetch(`${sys.gatewayUrl}/health`)).status).toBe(200);
  });
});
