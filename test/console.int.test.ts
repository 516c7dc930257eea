import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./support/browser.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";
import { admin, M, openTopic, publish, subscribe } from "./subscriptions/helpers.ts";
import { call } from "./support/http.ts";

// Failure survived: a callback receiver that fails every attempt until its events are
// dead-lettered; an operator sees the dead letter in the web console (a real headless Chromium
// on /console/), fixes the receiver, presses Replay, and every event arrives once, in order.
// Also: every page of the console renders the broker's data as its admin API reports it.

type Envelope<T> = { code: number; data: T };
type Page<T> = { total: number; pageData: T[] };
const WAIT = { timeout: 45_000 };

describe("web console", () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        // Dead-letter after 3 quick failures instead of 20 spread over minutes.
        RETRY_BASE_MS: "50",
        RETRY_MAX_MS: "200",
        RETRY_MAX_ATTEMPTS: "3",
        DELIVERY_TIMEOUT_MS: "1500",
        NOTIFIER_POLL_MS: "200",
        NOTIFIER_SWEEP_MS: "500",
        // The charts' history is sampled each second, so the overview shows some within a test.
        CONSOLE_HISTORY_INTERVAL_MS: "1000",
      },
    });
    browser = await openBrowser(sys.gatewayUrl);
  });

  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  const page = () => browser.page;
  const open = async (hash: string) => {
    await page().goto(`${sys.gatewayUrl}/console/${hash}`);
    await page().locator("main section").first().waitFor(WAIT);
  };
  const cell = (table: string, key: string, col: string) =>
    page().locator(`[data-testid="${table}"] tr[data-key="${key}"] td[data-col="${col}"]`);
  /** A rate chart's peak (its note) and latest rate (its caption); NaN before its first point. */
  const peak = async (kind: string) => Number(/peak ([\d.]+)/.exec((await page().getByTestId(`chart-${kind}`).textContent()) ?? "")?.[1]);
  const latest = async (kind: string) => Number(await page().getByTestId(`chart-${kind}`).locator("figcaption strong").textContent());

  it("a dead letter shown in the console is replayed from it: every event arrives in order and the row goes", async () => {
    const rx = await Receiver.start();
    try {
      rx.answer = () => ({ status: 503 });
      await openTopic(sys.gatewayUrl, "console/orders");
      const id = await subscribe(sys.gatewayUrl, { topic: "console/orders", url: rx.url() });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await publish(sys.gatewayUrl, "console/orders", `order ${i}`));

      await open("#/dead-letters");
      const row = page().locator(`[data-testid="dead-letter-table"] tr[data-key="${id}"]`);
      // The page refreshes itself: no reload, the row appears once the notifier gives up.
      await row.waitFor(WAIT);
      await browser.screenshot("console-1-dead-letter");
      await expect.poll(() => cell("dead-letter-table", id, "eventId").textContent(), WAIT).toBe(ids[0]);
      expect(await cell("dead-letter-table", id, "lastError").textContent()).toBe("HTTP 503");
      expect(rx.deliveredIds(id)).toEqual([]);

      // The subscriptions page marks it too, and leads back to the dead letters.
      await page().locator('[data-nav="subscriptions"]').click();
      await expect.poll(() => cell("subscription-table", id, "state").textContent(), WAIT).toBe("suspended");
      expect(await cell("subscription-table", id, "lastError").textContent()).toBe("HTTP 503");
      expect(await cell("subscription-table", id, "lastDelivered").textContent()).toBe("never");
      await cell("subscription-table", id, "state").getByRole("link").click();
      await row.waitFor(WAIT);

      rx.answer = () => ({ status: 200 });
      await row.getByRole("button", { name: "Replay" }).click();
      await page().getByTestId("replay-note").waitFor(WAIT);
      expect(await page().getByTestId("replay-note").textContent()).toBe(`Replayed ${id}`);
      await browser.screenshot("console-2-replayed");

      await rx.until(() => rx.deliveredIds(id).length >= ids.length, "every event after the replay", WAIT.timeout);
      expect(rx.deliveredIds(id)).toEqual(ids);
      await row.waitFor({ state: "detached", ...WAIT });
      expect(((await admin(sys.gatewayUrl, M, "deadLetters")) as Envelope<unknown[]>).data).toEqual([]);

      // The subscription's counters in the console catch up with the deliveries.
      await open("#/subscriptions");
      await expect.poll(() => cell("subscription-table", id, "delivered").textContent(), WAIT).toBe(String(ids.length));
      expect(await cell("subscription-table", id, "pending").textContent()).toBe("0");
      expect(await cell("subscription-table", id, "state").textContent()).toBe("caught up");
      await browser.screenshot("console-3-subscriptions");

      // The subscription's recorded delivery attempts are a click away: the three refused ones
      // and the deliveries after the replay, newest first.
      type Attempt = { eventId: string; delivered: boolean; httpStatus: number | null };
      const attempts = (await admin(sys.gatewayUrl, M, "deliveryAttempts", { subscriptionId: id, pageSize: "100" })) as Envelope<
        Page<Attempt>
      >;
      expect(attempts.code).toBe(0);
      expect(attempts.data.pageData.filter((a) => !a.delivered).map((a) => [a.eventId, a.httpStatus])).toEqual(
        [1, 2, 3].map(() => [ids[0], 503]),
      );
      await cell("subscription-table", id, "actions").getByRole("link", { name: "attempts" }).click();
      const shown = () =>
        page()
          .locator('[data-testid="attempt-table"] tbody tr')
          .evaluateAll((rows) =>
            rows.map((r) => [r.querySelector('[data-col="eventId"]')?.textContent, r.querySelector('[data-col="delivered"]')?.textContent]),
          );
      await expect
        .poll(shown, WAIT)
        .toEqual(attempts.data.pageData.slice(0, 20).map((a) => [a.eventId, a.delivered ? "delivered" : "failed"]));
      await browser.screenshot("console-4-attempts");
      expect(browser.foreignRequests).toEqual([]);
      expect(browser.pageErrors).toEqual([]);
    } finally {
      await rx.close();
    }
  });

  it("every page renders the broker's data as its admin API reports it", async () => {
    const rx = await Receiver.start();
    try {
      const topic = "console/pages";
      await openTopic(sys.gatewayUrl, topic);
      // More blocks than one page of 20 holds, so the block list pages.
      for (let i = 0; i < 23; i++) await publish(sys.gatewayUrl, topic, `event ${i}`);
      const id = await subscribe(sys.gatewayUrl, { topic, url: rx.url() });
      const api = async <T>(op: string, params: Record<string, string> = {}) =>
        ((await admin(sys.gatewayUrl, M, op, params)) as Envelope<T>).data;
      type General = { latestBlock: number; transactionCount: number; nodeCount: number };
      let general = await api<General>("group/general");
      const text = (testId: string) => page().getByTestId(testId).textContent();

      await open("#/overview");
      await expect.poll(() => text("stat-height"), WAIT).toBe(String(general.latestBlock));
      expect(await text("stat-transactions")).toBe(String(general.transactionCount));
      expect(await text("stat-nodes")).toBe(String(general.nodeCount));
      const chainNodes = await api<Page<{ nodeId: string }>>("node/nodeList", { pageNumber: "1", pageSize: "10" });
      for (const n of chainNodes.pageData) expect(await cell("chain-nodes", n.nodeId, "nodeActive").textContent()).toBe("alive");
      for (const g of await api<string[]>("listNodes")) expect(await cell("gateways", g, "state").textContent()).toBe("alive");
      await page().getByTestId("group-table").waitFor(WAIT);
      expect(await cell("group-table", "1", "latestBlock").textContent()).toBe(String(general.latestBlock));
      // The rate charts open with the gateways' history (the events published above show as a
      // peak at once), then sample while the page is open: an event sealed meanwhile shows as
      // the latest rate.
      await expect.poll(() => peak("sealed"), WAIT).toBeGreaterThan(0);
      await expect.poll(() => latest("sealed"), WAIT).toBe(0);
      await publish(sys.gatewayUrl, topic, "while the overview is open");
      await expect.poll(() => latest("sealed"), WAIT).toBeGreaterThan(0);
      general = await api<General>("group/general");
      await page().getByTestId("chart-delivered").waitFor(WAIT);
      expect((await call(sys.gatewayUrl, "/metrics")).status).toBe(200);
      await page().getByTestId("chart-publishes").waitFor(WAIT);
      if ((await call(sys.gatewayUrl, "/openapi.html")).status === 200) await page().getByTestId("api-reference").waitFor(WAIT);
      await browser.screenshot("console-pages-overview");

      await page().locator('[data-nav="topics"]').click();
      await cell("topic-table", topic, "sequenceNumber").waitFor(WAIT);
      expect(await cell("topic-table", topic, "sequenceNumber").textContent()).toBe("24");
      await cell("topic-table", topic, "topicName").getByRole("link").click();
      await expect.poll(() => page().locator('[data-testid="topic-state"] dd[data-key="sequenceNumber"]').textContent(), WAIT).toBe("24");
      await browser.screenshot("console-pages-topics");

      // Blocks newest first: the console's page 1 is blockList's last page.
      await page().locator('[data-nav="blocks"]').click();
      const pages = Math.ceil(general.latestBlock / 20);
      const heights = async () =>
        page()
          .locator('[data-testid="block-table"] tbody tr')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key")));
      const apiHeights = async (pageNumber: number) =>
        (await api<Page<{ blockNumber: number }>>("block/blockList", { pageNumber: String(pageNumber), pageSize: "20" })).pageData.map(
          (b) => String(b.blockNumber),
        );
      await expect.poll(heights, WAIT).toEqual(await apiHeights(pages));
      expect(await text("page-label")).toBe(`Page 1 of ${pages}`);
      await page().getByTestId("next").click();
      await expect.poll(heights, WAIT).toEqual(await apiHeights(pages - 1));
      await browser.screenshot("console-pages-blocks");

      // A block's transactions, reached from its height.
      await page().getByTestId("prev").click();
      await expect.poll(heights, WAIT).toEqual(await apiHeights(pages));
      await page().locator('[data-testid="block-table"] tbody tr').first().getByRole("link").click();
      // The transaction hashes the page lists, in its order.
      const transactionRows = () =>
        page()
          .locator('[data-testid="transaction-table"] tbody tr')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key")));
      const txs = await api<Page<{ transHash: string }>>("transaction/transList", {
        blockNumber: String(general.latestBlock),
        pageNumber: "1",
        pageSize: "20",
      });
      await expect.poll(transactionRows, WAIT).toEqual(txs.pageData.map((t) => t.transHash));
      await browser.screenshot("console-pages-transactions");
      await page().getByTestId("older-block").click();
      const older = await api<Page<{ transHash: string }>>("transaction/transList", {
        blockNumber: String(general.latestBlock - 1),
        pageNumber: "1",
        pageSize: "20",
      });
      await expect.poll(transactionRows, WAIT).toEqual(older.pageData.map((t) => t.transHash));

      await page().locator('[data-nav="subscriptions"]').click();
      await cell("subscription-table", id, "topicName").waitFor(WAIT);
      expect(await cell("subscription-table", id, "topicName").textContent()).toBe(topic);
      // Subscribed before the event published while the overview was open: that one is delivered.
      await expect.poll(() => cell("subscription-table", id, "delivered").textContent(), WAIT).toBe("1");
      await rx.until(() => rx.deliveredIds(id).length === 1, "the one event published after subscribing");
      await browser.screenshot("console-pages-subscriptions");

      await page().locator('[data-nav="dead-letters"]').click();
      await page().getByTestId("dead-letter-table-empty").waitFor(WAIT);
      await browser.screenshot("console-pages-dead-letters");
      expect(browser.foreignRequests).toEqual([]);
      expect(browser.pageErrors).toEqual([]);
    } finally {
      await rx.close();
    }
  });

  it("a chart opened now shows the rates from before it was opened, on a labelled time axis", async () => {
    const topic = "console/history";
    await openTopic(sys.gatewayUrl, topic);
    for (let i = 0; i < 5; i++) await publish(sys.gatewayUrl, topic, `before the page ${i}`);
    // The gateway samples each second (CONSOLE_HISTORY_INTERVAL_MS): wait for samples after the publishes.
    const published = Date.now();
    type History = { available: boolean; now: number; samples: { at: number; sealed: number; publishes: number }[] };
    const history = async () =>
      ((await admin(sys.gatewayUrl, M, "metricsHistory", { since: String(published) })) as Envelope<History>).data;
    await expect.poll(async () => (await history()).samples.length, WAIT).toBeGreaterThan(1);
    expect((await history()).available).toBe(true);

    // A fresh page: nothing it sampled itself comes from before `opened`.
    await open("#/overview");
    const opened = Date.now();
    await page().reload();
    await page().locator("main section").first().waitFor(WAIT);
    const firstAt = async (kind: string) => Number((await page().getByTestId(`chart-${kind}`).getAttribute("data-first-at")) || Number.NaN);
    for (const kind of ["sealed", "delivered", "publishes"]) {
      await expect.poll(() => firstAt(kind), WAIT).toBeLessThan(opened - 2_000);
    }
    // The publishes of before the page show as rates of both series.
    expect(await peak("sealed")).toBeGreaterThan(0);
    expect(await peak("publishes")).toBeGreaterThan(0);
    // The time axis: its ends labelled with their clock times, round times between marked.
    const chart = page().getByTestId("chart-sealed");
    const start = await chart.getByTestId("x-start").textContent();
    const end = await chart.getByTestId("x-end").textContent();
    expect(start).toMatch(/^\d{2}:\d{2}:\d{2}$/);
    expect(end).toMatch(/^\d{2}:\d{2}:\d{2}$/);
    expect(start).not.toBe(end);
    await browser.screenshot("console-history-overview");
    // Then it goes on: points after the page opened are appended to the history.
    await expect.poll(async () => Number(await chart.getAttribute("data-points")), WAIT).toBeGreaterThan(0);
    const before = Number(await page().getByTestId("chart-publishes").getAttribute("data-points"));
    await publish(sys.gatewayUrl, topic, "after the page opened");
    await expect
      .poll(async () => Number(await page().getByTestId("chart-publishes").getAttribute("data-points")), WAIT)
      .toBeGreaterThan(before);
    await expect.poll(() => latest("sealed"), WAIT).toBeGreaterThan(0);
    expect(browser.foreignRequests).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });
});
