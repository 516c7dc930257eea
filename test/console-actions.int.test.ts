import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser } from "./support/browser.ts";
import { Receiver } from "./support/receiver.ts";
import { TestSystem } from "./support/system.ts";
import { openTopic, publish, subscribe } from "./subscriptions/helpers.ts";

// The console acts (issue 23, item 5), in a real headless Chromium against a real gateway: the
// Events page finds an event, shows its payload and its deliveries and resends it; the
// subscriptions page tells a failing receiver (retrying, next attempt, last error, never
// delivered) from a healthy one and subscribes (with an alert URL), tests, replays, sets and
// clears the alert URL (shown redacted) and deletes; an open console
// polls with one batched request per refresh, so the access log stays quiet.

const WAIT = { timeout: 45_000 };

describe("web console actions", () => {
  let sys: TestSystem;
  let browser: Browser;

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
        // Retries a second or two apart, never dead-lettered during the test.
        RETRY_BASE_MS: "1000",
        RETRY_MAX_MS: "2000",
        RETRY_MAX_ATTEMPTS: "1000",
        DELIVERY_TIMEOUT_MS: "1500",
        NOTIFIER_POLL_MS: "200",
        NOTIFIER_SWEEP_MS: "500",
      },
    });
    browser = await openBrowser(sys.gatewayUrl);
  });

  afterAll(async () => {
    await browser?.close();
    await sys?.stop();
  });

  const page = () => browser.page;
  const cell = (table: string, key: string, col: string) =>
    page().locator(`[data-testid="${table}"] tr[data-key="${key}"] td[data-col="${col}"]`);

  it("the events page finds an event by pattern, shows its payload three ways, its deliveries, and resends it", async () => {
    const rx = await Receiver.start();
    try {
      await openTopic(sys.gatewayUrl, "actions/orders");
      const id = await subscribe(sys.gatewayUrl, { topic: "actions/+", url: rx.url() });
      const eventId = await publish(sys.gatewayUrl, "actions/orders", '{"order":7,"items":["a"]}');
      await rx.until(() => rx.deliveredIds(id).includes(eventId), "the event delivered");

      await page().goto(`${sys.gatewayUrl}/console/#/events`);
      await page().getByTestId("event-search").waitFor(WAIT);
      await page().getByLabel("Topic or pattern").fill("actions/+");
      await page().getByRole("button", { name: "Search" }).click();
      await cell("event-table", eventId, "topic").waitFor(WAIT);
      expect(await cell("event-table", eventId, "topic").textContent()).toBe("actions/orders");
      await cell("event-table", eventId, "eventId").getByRole("link").click();

      const payload = () => page().getByTestId("payload-text").textContent();
      await expect.poll(payload, WAIT).toBe(JSON.stringify({ order: 7, items: ["a"] }, null, 2));
      await page().getByTestId("view-text").click();
      expect(await payload()).toBe('{"order":7,"items":["a"]}');
      await page().getByTestId("view-base64").click();
      expect(await payload()).toBe(Buffer.from('{"order":7,"items":["a"]}').toString("base64"));

      await expect.poll(() => cell("delivery-table", id, "state").textContent(), WAIT).toBe("delivered");
      await page().locator('[data-testid="event-attempt-table"] tbody tr').first().waitFor(WAIT);
      await browser.screenshot("console-actions-1-event");

      await cell("delivery-table", id, "actions").getByRole("button", { name: "Resend" }).click();
      await expect.poll(() => page().getByTestId("action-note").textContent(), WAIT).toBe(`Resend 1 of ${eventId} to ${id} asked for`);
      await rx.until(() => rx.delivered().filter((d) => d.event.eventId === eventId).length >= 2, "the resend", WAIT.timeout);
      expect(browser.pageErrors).toEqual([]);
      expect(browser.foreignRequests).toEqual([]);
    } finally {
      await rx.close();
    }
  });

  it("a failing receiver shows as retrying with its error and never delivered; subscribe, test, replay from an event, pause, resume, rotate the secret, set and clear the alert URL and delete act", async () => {
    const rx = await Receiver.start();
    try {
      rx.answer = () => ({ status: 503 });
      const topic = "actions/failing";
      await openTopic(sys.gatewayUrl, topic);
      await page().goto(`${sys.gatewayUrl}/console/#/subscriptions`);
      const form = page().getByTestId("subscribe-form");
      await form.waitFor(WAIT);
      await form.getByLabel("Topic").fill(topic);
      await form.getByLabel("Callback").fill(rx.url());
      // An alert URL at subscribe (nothing listens there: alerts are retried, never reach the receiver), shown redacted.
      await form.getByLabel("Alerts to").fill("http://127.0.0.1:9/evb-alerts?token=t0ps3cret");
      await form.getByRole("button", { name: "Subscribe" }).click();
      await expect.poll(() => page().getByTestId("action-note").textContent(), WAIT).toMatch(/^Subscribed [0-9a-f-]{36}$/);
      const id = ((await page().getByTestId("action-note").textContent()) ?? "").slice("Subscribed ".length);
      await cell("subscription-table", id, "state").waitFor(WAIT);
      expect(await cell("subscription-table", id, "lastDelivered").textContent()).toBe("never");
      expect(await cell("subscription-table", id, "alertUrl").textContent()).toBe("http://127.0.0.1:9/evb-alerts?token=***");

      // A test event from the page: the receiver refuses it, and the row says so.
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Test event" }).click();
      await expect
        .poll(() => page().getByTestId("action-note").textContent(), WAIT)
        .toMatch(/^Test event \S+ published to actions\/failing$/);
      const testEvent = / (\S+) published/.exec((await page().getByTestId("action-note").textContent()) ?? "")?.[1] as string;
      await expect.poll(() => cell("subscription-table", id, "state").textContent(), WAIT).toMatch(/^retrying next \d\d:\d\d:\d\d$/);
      expect(await cell("subscription-table", id, "lastError").textContent()).toBe("HTTP 503");
      expect(await cell("subscription-table", id, "pending").textContent()).toBe("1");
      expect(await cell("subscription-table", id, "lastDelivered").textContent()).toBe("never");
      await browser.screenshot("console-actions-2-retrying");

      rx.answer = () => ({ status: 200 });
      await rx.until(() => rx.deliveredIds(id).includes(testEvent), "the test event once the receiver recovers", WAIT.timeout);
      await expect.poll(() => cell("subscription-table", id, "state").textContent(), WAIT).toBe("caught up");
      expect(await cell("subscription-table", id, "lastDelivered").textContent()).not.toBe("never");
      expect(await cell("subscription-table", id, "lastError").textContent()).toBe("—");

      // Replay from the test event: it is delivered again.
      const later = await publish(sys.gatewayUrl, topic, "after the test");
      await rx.until(() => rx.deliveredIds(id).includes(later), "the later event");
      const before = rx.delivered().length;
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Replay from…" }).click();
      const replay = page().getByTestId("replay-form");
      await replay.getByLabel("Event id").fill(testEvent);
      await replay.getByRole("button", { name: "Replay" }).click();
      await expect.poll(() => page().getByTestId("action-note").textContent(), WAIT).toBe(`Replaying ${id} from event ${testEvent}`);
      await rx.until(() => rx.delivered().length >= before + 2, "the replayed events", WAIT.timeout);
      expect(
        rx
          .delivered()
          .slice(before)
          .map((d) => d.event.eventId),
      ).toEqual([testEvent, later]);

      // Pause: the row says paused; an event published meanwhile goes out only after Resume.
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Pause" }).click();
      await expect.poll(() => cell("subscription-table", id, "state").textContent(), WAIT).toBe("paused");
      const held = await publish(sys.gatewayUrl, topic, "while paused");
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Resume" }).click();
      await expect.poll(() => page().getByTestId("action-note").textContent(), WAIT).toMatch(/^Resumed /);
      await rx.until(() => rx.deliveredIds(id).includes(held), "the event held while paused", WAIT.timeout);
      await expect.poll(() => cell("subscription-table", id, "state").textContent(), WAIT).toBe("caught up");

      // A signing secret of its own, shown once in the note.
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Rotate secret" }).click();
      await expect
        .poll(() => page().getByTestId("action-note").textContent(), WAIT)
        .toMatch(new RegExp(`^New signing secret of ${id} .*: whsec_[A-Za-z0-9+/=]{40,}$`));

      // Its alert URL set by the owner (admin/subscriptionSettings), shown as the callback URL is: credentials hidden; then cleared.
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Alert URL…" }).click();
      const alertForm = page().getByTestId("alert-url-form");
      await alertForm.getByLabel("Alert URL").fill("http://ops:hunter2@127.0.0.1:9/alerts?sig=abc&team=shop");
      await alertForm.getByRole("button", { name: "Set" }).click();
      await expect.poll(() => page().getByTestId("action-note").textContent(), WAIT).toBe(`Alerts of ${id} go to the new URL`);
      await expect
        .poll(() => cell("subscription-table", id, "alertUrl").textContent(), WAIT)
        .toBe("http://***:***@127.0.0.1:9/alerts?sig=***&team=shop");
      expect(await page().locator('[data-testid="subscription-table"]').textContent()).not.toContain("hunter2");
      await browser.screenshot("console-actions-3-alert-url");
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Alert URL…" }).click();
      await page().getByTestId("alert-url-form").getByRole("button", { name: "No alerts" }).click();
      await expect.poll(() => page().getByTestId("action-note").textContent(), WAIT).toBe(`No alerts for ${id}`);
      await expect.poll(() => cell("subscription-table", id, "alertUrl").textContent(), WAIT).toBe("none");

      await cell("subscription-table", id, "actions").getByRole("button", { name: "Delete" }).click();
      await cell("subscription-table", id, "actions").getByRole("button", { name: "Really delete" }).click();
      await page()
        .locator(`[data-testid="subscription-table"] tr[data-key="${id}"]`)
        .waitFor({ state: "detached", ...WAIT });
      expect(browser.pageErrors).toEqual([]);
      expect(browser.foreignRequests).toEqual([]);
    } finally {
      await rx.close();
    }
  });

  it("an open console page writes only a few access-log lines: one batched request per refresh", async () => {
    const requestLines = () =>
      readFileSync(sys.logFileOf("gateway-1"), "utf8")
        .split("\n")
        .filter((l) => l.includes('"msg":"request"') && l.includes('"level":30'));
    await page().goto(`${sys.gatewayUrl}/console/#/overview`);
    await page().getByTestId("group-table").waitFor(WAIT);
    await page().getByTestId("chart-sealed").waitFor(WAIT);
    const start = requestLines().length;
    await new Promise((r) => setTimeout(r, 10_000));
    const lines = requestLines().slice(start);
    // A refresh every 5 s: two or three batches in 10 s (the page made about 40 requests per refresh before).
    expect(lines.length, lines.join("\n")).toBeLessThanOrEqual(4);
    expect(
      lines.every((l) => l.includes('"operation":"admin/batch"')),
      lines.join("\n"),
    ).toBe(true);
  });
});
