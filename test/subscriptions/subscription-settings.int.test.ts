import { createHmac, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../support/http.ts";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { admin, E, L, M, openTopic, publish, publishMany, subscribe } from "./helpers.ts";

// Crash survived: none. A subscription's own settings (issue 23, item 2) enforced by two
// notifiers that read them from Postgres: its own signing secret with a rotation's grace, a rate
// limit, pause and resume, its own retry schedule; and the operation's answers in every variant.

/** Standard Webhooks verification, written from the scheme: any "v1,<base64 HMAC>" entry signed with `secret`. */
function signedWith(secret: string, r: { headers: Record<string, string | string[] | undefined>; body: string }): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key)
    .update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.body}`)
    .digest("base64");
  return String(r.headers["webhook-signature"]).split(" ").includes(`v1,${expected}`);
}

interface Settings {
  subscriptionId: string;
  paused: boolean;
  maxRate: number | null;
  retryMaxAttempts: number | null;
  signing: string;
  alertUrl: string | null;
  secret?: string;
}

describe("settings per subscription", () => {
  const deploymentKey = `whsec_${randomBytes(32).toString("base64")}`;
  let sys: TestSystem;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await Receiver.start();
    receivers.push(r);
    return r;
  };
  const settings = async (id: string, change: Record<string, string> = {}, mount = M) => {
    const r = (await admin(sys.gatewayUrl, mount, "subscriptionSettings", { subscriptionId: id, ...change })) as {
      code: number;
      data: Settings;
    };
    expect(r.code, JSON.stringify(r)).toBe(0);
    return r.data;
  };

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 2,
      env: {
        ...QUICK_CALLBACKS_ENV,
        RETRY_MAX_MS: "200",
        RETRY_MAX_ATTEMPTS: "10",
        DELIVERY_TIMEOUT_MS: "1500",
        WEBHOOK_SECRETS: deploymentKey,
      },
    });
    await openTopic(sys.gatewayUrl, "settings");
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await sys?.stop();
  });

  it("its own secret is shown once and signs instead of the deployment's; after a rotation both sign through the grace period, then only the new", async () => {
    const rx = await receiver();
    const id = await subscribe(sys.gatewayUrl, { topic: "settings", url: rx.url() });
    const first = await settings(id, { rotateSecret: "true" });
    expect(first.signing).toBe("own");
    const s1 = first.secret as string;
    expect(s1).toMatch(/^whsec_/);
    expect((await settings(id)).secret).toBeUndefined();
    await publish(sys.gatewayUrl, "settings", "one");
    await rx.until(() => rx.requests.length >= 1, "the first callback");
    expect(signedWith(s1, rx.requests[0] as never)).toBe(true);
    expect(signedWith(deploymentKey, rx.requests[0] as never)).toBe(false);

    const s2 = (await settings(id, { rotateSecret: "true", secretGraceMs: "600000" })).secret as string;
    await publish(sys.gatewayUrl, "settings", "two");
    await rx.until(() => rx.requests.length >= 2, "the second callback");
    expect([signedWith(s2, rx.requests[1] as never), signedWith(s1, rx.requests[1] as never)]).toEqual([true, true]);

    // No grace: the secret before stops signing at once.
    const s3 = (await settings(id, { rotateSecret: "true", secretGraceMs: "0" })).secret as string;
    await publish(sys.gatewayUrl, "settings", "three");
    await rx.until(() => rx.requests.length >= 3, "the third callback");
    expect([signedWith(s3, rx.requests[2] as never), signedWith(s2, rx.requests[2] as never)]).toEqual([true, false]);
  });

  it("a paused subscription delivers nothing while another on the topic gets everything; resumed, it gets the backlog in order", async () => {
    const held = await receiver();
    const free = await receiver();
    await openTopic(sys.gatewayUrl, "paused");
    const id = await subscribe(sys.gatewayUrl, { topic: "paused", url: held.url(), paused: "true" });
    const other = await subscribe(sys.gatewayUrl, { topic: "paused", url: free.url() });
    const ids = await publishMany(sys.gatewayUrl, "paused", 6, 1);
    await free.until(() => free.deliveredIds(other).length >= 6, "the free subscription's 6 callbacks");
    expect(held.requests).toHaveLength(0);
    expect((await settings(id)).paused).toBe(true);
    const list = (await admin(sys.gatewayUrl, E, "listSubscription")) as Record<string, Record<string, Record<string, string>>>;
    const rows = Object.values(list).flatMap((byId) => Object.values(byId));
    expect(rows.find((r) => r.subscribeId === id)?.paused).toBe("true");
    expect(rows.find((r) => r.subscribeId === other)).not.toHaveProperty("paused");
    // The console's state read says so too.
    const read = (await admin(sys.gatewayUrl, L, "subscriptionStates")) as { data?: unknown } | unknown[];
    const states = (Array.isArray(read) ? read : read.data) as Array<{ subscriptionId: string; state: string }>;
    expect(states.find((r) => r.subscriptionId === id)?.state).toBe("paused");
    expect(states.find((r) => r.subscriptionId === other)?.state).not.toBe("paused");

    expect((await settings(id, { paused: "false" })).paused).toBe(false);
    await held.until(() => held.deliveredIds(id).length >= 6, "the held backlog");
    expect(held.deliveredIds(id)).toEqual(ids);
  });

  it("a rate limit spaces its callbacks while an unlimited subscription of the same events is not held by it", async () => {
    const slow = await receiver();
    const fast = await receiver();
    await openTopic(sys.gatewayUrl, "rated");
    const id = await subscribe(sys.gatewayUrl, { topic: "rated", url: slow.url(), maxRate: "10", deliveryWindow: "8" });
    const other = await subscribe(sys.gatewayUrl, { topic: "rated", url: fast.url() });
    const ids = await publishMany(sys.gatewayUrl, "rated", 8);
    await slow.until(() => slow.deliveredIds(id).length >= 8, "8 rate-limited callbacks");
    await fast.until(() => fast.deliveredIds(other).length >= 8, "8 free callbacks");
    expect(slow.deliveredIds(id)).toEqual(ids);
    // Seven spacings of 100 ms at least between the first and the last start (a lower bound: load only adds to it).
    const at = slow.requests.map((r) => r.receivedAt);
    expect((at.at(-1) ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(600);
    expect((await settings(id)).maxRate).toBe(10);
  });

  it("its own retry budget dead-letters the head after its attempts, not the deployment's", async () => {
    const rx = await receiver();
    rx.answer = () => ({ status: 500 });
    await openTopic(sys.gatewayUrl, "retried");
    const id = await subscribe(sys.gatewayUrl, {
      topic: "retried",
      url: rx.url(),
      retryMaxAttempts: "2",
      retryBaseMs: "10",
      retryMaxMs: "20",
    });
    await publish(sys.gatewayUrl, "retried", "doomed");
    await expect
      .poll(
        async () =>
          ((await admin(sys.gatewayUrl, M, "deadLetters")) as { data: { subscriptionId: string; attempts: number }[] }).data.find(
            (d) => d.subscriptionId === id,
          )?.attempts,
        { timeout: 30_000 },
      )
      .toBe(2);
    expect(rx.requests).toHaveLength(2);
  });

  it("answers its documented codes in every variant's admin shape; subscribe checks the settings after the topic", async () => {
    const rx = await receiver();
    const id = await subscribe(sys.gatewayUrl, { topic: "settings", url: rx.url() });
    for (const mount of [L, M, E]) {
      const bad = (await admin(sys.gatewayUrl, mount, "subscriptionSettings", { subscriptionId: id, maxRate: "0" })) as { code: number };
      expect(bad.code).toBe(100513);
      const conflict = (await admin(sys.gatewayUrl, mount, "subscriptionSettings", {
        subscriptionId: id,
        retryBaseMs: "50",
        retryMaxMs: "10",
      })) as {
        code: number;
      };
      expect(conflict.code).toBe(100514);
      const unknown = (await admin(sys.gatewayUrl, mount, "subscriptionSettings", {
        subscriptionId: "00000000-0000-4000-8000-000000000000",
      })) as {
        code: number;
      };
      expect(unknown.code).toBe(100504);
      // E's admin answers are bare, L's and M's enveloped.
      const read = (await admin(sys.gatewayUrl, mount, "subscriptionSettings", { subscriptionId: id })) as Settings & { data: Settings };
      expect(mount === E ? read : read.data).toMatchObject({ subscriptionId: id, paused: false, maxRate: null, signing: "deployment" });
    }
    const refused = await call(sys.gatewayUrl, `${M}/rest/subscribe`, { topic: "settings", url: rx.url(), deliveryWindow: "999" }, "POST");
    expect((refused.json as { code: number }).code).toBe(100513);
    const topicFirst = await call(sys.gatewayUrl, `${E}/rest/subscribe`, { topic: "", url: rx.url(), deliveryWindow: "999" }, "POST");
    expect((topicFirst.json as { code: number }).code).toBe(100103);
  });

  it("subscribe takes an alertUrl in M and E, stored as admin/subscriptionSettings sets it; a bad one answers 100513, a refused host 100502", async () => {
    const rx = await receiver();
    const alerts = rx.url("/alerts");
    for (const mount of [M, E]) {
      const id = await subscribe(sys.gatewayUrl, { topic: "settings", url: rx.url(), alertUrl: alerts, maxRate: "5" }, mount);
      expect(await settings(id)).toMatchObject({ subscriptionId: id, alertUrl: alerts, maxRate: 5 });
      // A continuation by its owner with a blank alertUrl: none again.
      expect(await subscribe(sys.gatewayUrl, { topic: "settings", url: rx.url(), subscriptionId: id, alertUrl: "" }, mount)).toBe(id);
      expect(await settings(id)).toMatchObject({ alertUrl: null, maxRate: 5 });
      const code = async (alertUrl: string) =>
        (
          (await call(sys.gatewayUrl, `${mount}/rest/subscribe`, { topic: "settings", url: rx.url(), alertUrl }, "POST")).json as {
            code: number;
          }
        ).code;
      expect(await code("ftp://127.0.0.1/alerts")).toBe(100513);
      expect(await code("not a url")).toBe(100513);
      // The callback policy (here 127.0.0.0/8 besides public addresses) as for admin/subscriptionSettings: no metadata service.
      expect(await code("http://169.254.169.254/latest/meta-data")).toBe(100502);
      expect(await code("http://10.0.0.1/alerts")).toBe(100502);
      const viaSettings = (await admin(sys.gatewayUrl, mount, "subscriptionSettings", {
        subscriptionId: id,
        alertUrl: "http://10.0.0.1/alerts",
      })) as {
        code: number;
      };
      expect(viaSettings.code).toBe(100502);
    }
    // Absent: a subscription with no alert URL, and subscribe's alertUrl is not taken before the topic is checked.
    const plain = await subscribe(sys.gatewayUrl, { topic: "settings", url: rx.url() });
    expect((await settings(plain)).alertUrl).toBeNull();
    const topicFirst = await call(sys.gatewayUrl, `${M}/rest/subscribe`, { topic: "", url: rx.url(), alertUrl: "bad" }, "POST");
    expect((topicFirst.json as { code: number }).code).toBe(100103);
  });
});
