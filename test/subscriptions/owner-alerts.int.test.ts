import { createHmac, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedRequest, Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { admin, M, openTopic, publish, subscribe } from "./helpers.ts";

// Crash survived: a notifier SIGKILLed while it sends an alert (the alert is sent again, with the
// same webhook-id, by the restarted notifier once its claim ran out). Alerts to the owner (issue
// 23, item 3) over real sockets through the real pipeline: failing once, suspended, recovered.

/** Standard Webhooks verification, written from the scheme: any "v1,<base64 HMAC>" entry signed with `secret`. */
function signedWith(secret: string, r: ReceivedRequest): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key)
    .update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`)
    .digest("base64");
  return String(r.headers["webhook-signature"]).split(" ").includes(`v1,${expected}`);
}

interface AlertBody {
  type: string;
  timestamp: string;
  data: { subscriptionId: string; topic: string; groupId: string; consecutiveFailures: number; lastError: string | null };
}

const alertsOf = (rx: Receiver): AlertBody[] => rx.requests.map((r) => JSON.parse(r.body) as AlertBody);
const typesOf = (rx: Receiver) => alertsOf(rx).map((a) => a.type);

describe("alerts to the owner", () => {
  const deploymentKey = `whsec_${randomBytes(32).toString("base64")}`;
  let sys: TestSystem;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await Receiver.start();
    receivers.push(r);
    return r;
  };
  const setAlertUrl = async (id: string, url: string) => {
    const r = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, alertUrl: url })) as {
      code: number;
      data: { alertUrl: string | null };
    };
    expect(r.code, JSON.stringify(r)).toBe(0);
    return r.data;
  };
  const deadLetter = async (id: string) =>
    ((await admin(sys.gatewayUrl, M, "deadLetters")) as { data: { subscriptionId: string }[] }).data.some((d) => d.subscriptionId === id);

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        ...QUICK_CALLBACKS_ENV,
        RETRY_MAX_MS: "200",
        RETRY_MAX_ATTEMPTS: "10",
        DELIVERY_TIMEOUT_MS: "1500",
        ALERT_FAILING_AFTER_ATTEMPTS: "3",
        ALERT_POLL_MS: "100",
        WEBHOOK_SECRETS: deploymentKey,
      },
    });
    await openTopic(sys.gatewayUrl, "alerted");
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await sys?.stop();
  });

  it("a failing receiver raises failing once, then suspended; after a replay that delivers, recovered; each signed", async () => {
    const rx = await receiver();
    const alerts = await receiver();
    rx.answer = () => ({ status: 503 });
    const id = await subscribe(sys.gatewayUrl, { topic: "alerted", url: rx.url(), retryMaxAttempts: "6" });
    expect((await setAlertUrl(id, alerts.url("/alerts"))).alertUrl).toBe(alerts.url("/alerts"));
    await publish(sys.gatewayUrl, "alerted", "doomed");

    await alerts.until(() => typesOf(alerts).includes("subscription.suspended"), "the suspended alert");
    expect(rx.requests).toHaveLength(6);
    expect(typesOf(alerts)).toEqual(["subscription.failing", "subscription.suspended"]);
    const [failing, suspended] = alertsOf(alerts);
    expect(failing?.data).toEqual({ subscriptionId: id, topic: "alerted", groupId: "1", consecutiveFailures: 3, lastError: "HTTP 503" });
    expect(suspended?.data).toMatchObject({ subscriptionId: id, consecutiveFailures: 6 });
    for (const r of alerts.requests) {
      expect(r.path).toBe("/alerts");
      expect(r.headers["webhook-id"]).toMatch(/^msg_alert_\d+$/);
      expect(signedWith(deploymentKey, r)).toBe(true);
    }

    rx.answer = () => ({ status: 200 });
    await admin(sys.gatewayUrl, M, "replayDeadLetters", { subscriptionId: id });
    await alerts.until(() => typesOf(alerts).includes("subscription.recovered"), "the recovered alert");
    expect(rx.deliveredIds(id)).toHaveLength(1);
    // Later deliveries raise nothing more.
    await publish(sys.gatewayUrl, "alerted", "fine");
    await rx.until(() => rx.deliveredIds(id).length >= 2, "the next callback");
    await new Promise((r) => setTimeout(r, 500));
    expect(typesOf(alerts)).toEqual(["subscription.failing", "subscription.suspended", "subscription.recovered"]);
    expect(alertsOf(alerts)[2]?.data).toMatchObject({ subscriptionId: id, consecutiveFailures: 6, lastError: "HTTP 503" });
  });

  it("a subscription with its own secret signs its alerts with it; one without an alert URL raises none", async () => {
    const rx = await receiver();
    const alerts = await receiver();
    rx.answer = () => ({ status: 410 });
    const id = await subscribe(sys.gatewayUrl, { topic: "alerted", url: rx.url() });
    const quiet = await subscribe(sys.gatewayUrl, { topic: "alerted", url: rx.url("/quiet") });
    const own = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, rotateSecret: "true" })) as {
      data: { secret: string };
    };
    await setAlertUrl(id, alerts.url());
    await publish(sys.gatewayUrl, "alerted", "gone");
    await alerts.until(() => alerts.requests.length >= 1, "the suspended alert");
    await expect.poll(() => deadLetter(quiet), { timeout: 30_000 }).toBe(true);
    expect(typesOf(alerts)).toEqual(["subscription.suspended"]);
    expect(signedWith(own.data.secret, alerts.requests[0] as ReceivedRequest)).toBe(true);
    expect(signedWith(deploymentKey, alerts.requests[0] as ReceivedRequest)).toBe(false);
    expect(alertsOf(alerts).every((a) => a.data.subscriptionId === id)).toBe(true);
  });

  it("an alert being sent when its notifier is killed is sent again, with the same webhook-id, after the restart", async () => {
    const rx = await receiver();
    const alerts = await receiver();
    rx.answer = () => ({ status: 500 });
    let started = false;
    alerts.answer = ({ n }) => {
      if (n === 0) started = true;
      return n === 0 ? { status: 200, delayMs: 1_000 } : { status: 200 };
    };
    const id = await subscribe(sys.gatewayUrl, { topic: "alerted", url: rx.url(), retryMaxAttempts: "1" });
    await setAlertUrl(id, alerts.url());
    await publish(sys.gatewayUrl, "alerted", "crash");
    await expect.poll(() => started, { timeout: 30_000 }).toBe(true);
    await sys.kill("notifier-1");
    await sys.restart("notifier-1");
    await alerts.until(() => alerts.requests.length >= 2, "the alert sent again", 60_000);
    const [first, again] = alerts.requests;
    expect(again?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(typesOf(alerts).slice(0, 2)).toEqual(["subscription.suspended", "subscription.suspended"]);
    expect(alertsOf(alerts)[0]?.data.subscriptionId).toBe(id);
  });
});
