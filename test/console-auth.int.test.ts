import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./support/browser.ts";
import { call } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";

// Failure survived: a caller without the API's Basic credentials gets no console and no data;
// with them, typed into the address bar as http://user:password@host/console/, the console reads
// the API (regression: fetch refuses a URL with credentials, and the page's relative URLs had
// inherited them from the address, so the console showed only an error).

describe("web console behind Basic authentication", () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    sys = await TestSystem.start({ gatewayEnv: { API_BASIC_AUTH: "ops:s3cret" } });
    browser = await openBrowser(sys.gatewayUrl);
  });

  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  it("is refused without credentials", async () => {
    for (const path of ["/console/", "/console/app.js", "/console/config.json", "/console/vendor/preact.mjs", "/event-m/admin/listGroup"]) {
      expect([path, (await call(sys.gatewayUrl, path)).status]).toEqual([path, 401]);
    }
  });

  it("console opened with credentials in the address reads the API", async () => {
    const url = new URL(`${sys.gatewayUrl}/console/#/overview`);
    url.username = "ops";
    url.password = "s3cret";
    await browser.page.goto(url.href);
    await browser.page.getByTestId("stat-height").waitFor({ timeout: 30_000 });
    const auth = { authorization: `Basic ${Buffer.from("ops:s3cret").toString("base64")}` };
    const general = (await (await fetch(`${sys.gatewayUrl}/event-m/admin/group/general`, { headers: auth })).json()) as {
      data: { latestBlock: number };
    };
    expect(await browser.page.getByTestId("stat-height").textContent()).toBe(String(general.data.latestBlock));
    await browser.screenshot("console-auth-overview");
    expect(browser.pageErrors.filter((e) => !e.includes("401"))).toEqual([]);
  });
});
