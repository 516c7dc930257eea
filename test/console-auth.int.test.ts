import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./support/browser.ts";
import { call } from "./support/http.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";

// Failure survived: a caller without the API's Basic credentials gets no console and no data;
// with them, typed into the address bar as http://user:password@host/console/, the console reads
// the API (regression: fetch refuses a URL with credentials, and the page's relative URLs had
// inherited them from the address, so the console showed only an error). The gateway mounts
// only variant E, so the console reads E's bare replies and E's listSubscription instead of M's.

const AUTH = { authorization: `Basic ${Buffer.from("ops:s3cret").toString("base64")}` };
const WAIT = { timeout: 30_000 };

describe("web console behind Basic authentication, on a gateway with only variant E", () => {
  let sys: TestSystem;
  let browser: Browser;
  let rx: Receiver;

  beforeAll(async () => {
    sys = await TestSystem.start({
      gatewayEnv: { API_BASIC_AUTH: "ops:s3cret", VARIANTS: "E:/event-e", CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8" },
    });
    browser = await openBrowser(sys.gatewayUrl);
    rx = await Receiver.start();
  });

  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await sys?.stop();
  });

  /** E's API with the credentials; its replies are bare. */
  const e = async (op: string, params: Record<string, string> = {}, method = "GET") => {
    const q = new URLSearchParams(params);
    const res = await fetch(`${sys.gatewayUrl}/event-e/${op}${method === "GET" ? `?${q}` : ""}`, {
      method,
      headers: method === "GET" ? AUTH : { ...AUTH, "content-type": "application/x-www-form-urlencoded" },
      body: method === "GET" ? undefined : q,
    });
    expect(res.status).toBe(200);
    return res.text();
  };

  it("is refused without credentials", async () => {
    for (const path of ["/console/", "/console/app.js", "/console/config.json", "/console/vendor/preact.mjs", "/event-e/admin/listGroup"]) {
      expect([path, (await call(sys.gatewayUrl, path)).status]).toEqual([path, 401]);
    }
  });

  it("console opened with credentials in the address reads the API", async () => {
    const topic = "console.e.orders";
    expect(JSON.parse(await e("rest/open", { topic }))).toBe(true);
    expect(JSON.parse(await e("rest/publish", { topic, content: "hello" }, "POST"))).toMatchObject({ status: "SUCCESS" });
    const id = await e("rest/subscribe", { topic, url: rx.url() }, "POST");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const general = JSON.parse(await e("admin/group/general")) as { latestBlock: number; transactionCount: number };

    const url = new URL(`${sys.gatewayUrl}/console/#/overview`);
    url.username = "ops";
    url.password = "s3cret";
    const page = browser.page;
    await page.goto(url.href);
    await page.getByTestId("stat-height").waitFor(WAIT);
    await expect.poll(() => page.getByTestId("stat-height").textContent(), WAIT).toBe(String(general.latestBlock));
    expect(await page.getByTestId("stat-transactions").textContent()).toBe(String(general.transactionCount));
    await browser.screenshot("console-e-overview");

    await page.locator('[data-nav="topics"]').click();
    await page.locator(`[data-testid="topic-table"] tr[data-key="${topic}"]`).waitFor(WAIT);

    // No notifier runs here: the one event published before subscribing is not the subscription's.
    await page.locator('[data-nav="subscriptions"]').click();
    const row = page.locator(`[data-testid="subscription-table"] tr[data-key="${id}"]`);
    await row.waitFor(WAIT);
    expect(await row.locator('td[data-col="topicName"]').textContent()).toBe(topic);
    expect(await row.locator('td[data-col="delivered"]').textContent()).toBe("0");
    await browser.screenshot("console-e-subscriptions");

    await page.locator('[data-nav="dead-letters"]').click();
    await page.getByTestId("dead-letter-table-empty").waitFor(WAIT);
    // The first requests of the page are answered 401 before the browser sends its credentials.
    expect(browser.pageErrors.filter((err) => !err.includes("401"))).toEqual([]);
    expect(browser.foreignRequests).toEqual([]);
  });
});
