import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyStore, newApiKey, poolOptions } from "@evb/storage";
import { type Browser, openBrowser } from "./support/browser.ts";
import { call } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";

// Failure survived: a gateway with API keys on (API_KEYS=true, no Basic login) answers every API
// call without a key 401. A browser cannot send a key with a page load, so the console's files
// (which hold no data) load, and the page asks for a key: a wrong one is refused, a good one
// shows the data, and every API call carries it.

const WAIT = { timeout: 30_000 };

describe("web console on a gateway with API keys", () => {
  let sys: TestSystem;
  let browser: Browser;
  let pool: pg.Pool;
  let key: string;

  beforeAll(async () => {
    sys = await TestSystem.start({ env: { API_KEYS: "true" } });
    pool = new pg.Pool(poolOptions(sys.env.DATABASE_URL as string, sys.env.DATABASE_SCHEMA as string, 1));
    const k = newApiKey();
    await new ApiKeyStore(pool).create({
      id: k.id,
      name: "console",
      secretSha256: k.secretSha256,
      roles: ["read", "admin"],
      groups: ["*"],
      publishRate: null,
      publishBurst: null,
      now: Date.now(),
    });
    key = k.key;
    browser = await openBrowser(sys.gatewayUrl);
  });

  afterAll(async () => {
    await browser?.close();
    await pool?.end();
    await sys?.stop();
  });

  it("serves the page without a key but no data", async () => {
    expect((await call(sys.gatewayUrl, "/console/")).status).toBe(200);
    expect((await call(sys.gatewayUrl, "/event-m/admin/listGroup")).status).toBe(401);
  });

  it("asks for a key, refuses a wrong one and reads the API with a good one", async () => {
    const page = browser.page;
    await page.goto(`${sys.gatewayUrl}/console/#/overview`);
    await page.getByTestId("key-form").waitFor(WAIT);
    await browser.screenshot("console-keys-1-form");

    await page.getByLabel("API key").fill(`${key.slice(0, -4)}AAAA`);
    await page.getByRole("button", { name: "Use key" }).click();
    await page.getByText("The gateway did not accept that key.").waitFor(WAIT);

    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Use key" }).click();
    await page.getByTestId("stat-height").waitFor(WAIT);
    const general = (await (
      await fetch(`${sys.gatewayUrl}/event-m/admin/group/general`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { latestBlock: number } };
    await expect.poll(() => page.getByTestId("stat-height").textContent(), WAIT).toBe(String(general.data.latestBlock));
    await browser.screenshot("console-keys-2-overview");

    // Forgetting the key takes the data away again.
    await page.getByTestId("forget-key").click();
    await page.getByTestId("key-form").waitFor(WAIT);
    expect(browser.pageErrors.filter((e) => !e.includes("401"))).toEqual([]);
    expect(browser.foreignRequests).toEqual([]);
  });
});
