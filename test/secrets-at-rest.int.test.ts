import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "evb-client";
import { inSchema } from "./support/ledger-services.ts";
import { type ReceivedRequest, Receiver } from "./support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "./support/system.ts";
import { admin, M, openTopic, publish, subscribe } from "./subscriptions/helpers.ts";

// Crash survived: a notifier SIGKILLed and replaced by one with another SECRETS_KEY (it delivers
// nothing of the subscription whose secret it cannot decrypt, and says why), then restarted with
// the right key (the held event goes out, signed with the subscription's own secret). Secrets at
// rest (docs/security.md) over real sockets through the real pipeline.
describe("signing secrets encrypted at rest (SECRETS_KEY)", () => {
  const key = randomBytes(32).toString("base64");
  const deploymentKey = `whsec_${randomBytes(32).toString("base64")}`;
  let sys: TestSystem;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await Receiver.start();
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        ...QUICK_CALLBACKS_ENV,
        RETRY_MAX_ATTEMPTS: "20",
        DELIVERY_TIMEOUT_MS: "1500",
        DELIVERY_LOCK_MS: "3000",
        SECRETS_KEY: key,
        WEBHOOK_SECRETS: deploymentKey,
      },
    });
    await openTopic(sys.gatewayUrl, "sealed");
  });
  afterAll(async () => {
    await sys?.stop();
    await rx?.close();
  });

  const stored = async (id: string) =>
    inSchema(
      sys.env,
      async (c) =>
        (await c.query<{ secret: string | null }>("SELECT secret FROM subscription_settings WHERE subscription_id = $1", [id])).rows[0]
          ?.secret,
    );
  const rotate = async (id: string) => {
    const r = (await admin(sys.gatewayUrl, M, "subscriptionSettings", { subscriptionId: id, rotateSecret: "true" })) as {
      code: number;
      data: { secret: string };
    };
    expect(r.code, JSON.stringify(r)).toBe(0);
    return r.data.secret;
  };
  /** The delivered callback of `eventId` to `path` (one event goes to every subscription of the topic). */
  const callbackOf = (eventId: string, path: string) =>
    rx.requests.find((r) => r.status === 200 && r.path === path && r.body.includes(eventId)) as ReceivedRequest;
  const verifies = (secret: string, r: ReceivedRequest) => verifyWebhook({ secret, headers: r.headers, body: r.body }).ok;

  let sealedId = "";
  let secret = "";

  it("stores a rotated secret as v1 ciphertext, not the secret, and the callbacks verify with the secret shown once", async () => {
    sealedId = await subscribe(sys.gatewayUrl, { topic: "sealed", url: rx.url("/sealed") });
    secret = await rotate(sealedId);
    expect(secret).toMatch(/^whsec_/);
    const column = (await stored(sealedId)) as string;
    expect(column).toMatch(/^v1:/);
    expect(column).not.toContain(secret);
    expect(column).not.toContain(secret.slice("whsec_".length));

    const eventId = await publish(sys.gatewayUrl, "sealed", "signed with a sealed secret");
    await rx.until(() => rx.deliveredIds(sealedId).includes(eventId), "the callback");
    expect(verifies(secret, callbackOf(eventId, "/sealed"))).toBe(true);
    expect(verifies(deploymentKey, callbackOf(eventId, "/sealed"))).toBe(false);
  });

  it("a secret stored readable before the key was set still signs", async () => {
    const id = await subscribe(sys.gatewayUrl, { topic: "sealed", url: rx.url("/plain") });
    const plain = `whsec_${randomBytes(32).toString("base64")}`;
    await inSchema(sys.env, (c) =>
      c.query("INSERT INTO subscription_settings (subscription_id, secret, updated_at) VALUES ($1, $2, 0)", [id, plain]),
    );
    const eventId = await publish(sys.gatewayUrl, "sealed", "signed with a readable secret");
    await rx.until(() => rx.deliveredIds(id).includes(eventId), "the callback");
    expect(verifies(plain, callbackOf(eventId, "/plain"))).toBe(true);
  });

  it("a notifier with another SECRETS_KEY sends nothing of that subscription, unsigned or otherwise, and names SECRETS_KEY; the right key delivers it", async () => {
    await sys.kill("notifier-1");
    await sys.addNotifier("notifier-wrong", { SECRETS_KEY: randomBytes(32).toString("hex") });
    const plainId = await subscribe(sys.gatewayUrl, { topic: "sealed", url: rx.url("/deployment") });
    const before = rx.requests.length;
    const held = await publish(sys.gatewayUrl, "sealed", "held until the right key");
    // The subscription without a secret of its own is delivered (signed with WEBHOOK_SECRETS) meanwhile.
    await rx.until(() => rx.deliveredIds(plainId).includes(held), "the other subscription's callback");
    expect(verifies(deploymentKey, callbackOf(held, "/deployment"))).toBe(true);
    await expect
      .poll(() => readFileSync(sys.logFileOf("notifier-wrong"), "utf8").includes(`the signing secret of subscription ${sealedId}`), {
        timeout: 30_000,
      })
      .toBe(true);
    const log = readFileSync(sys.logFileOf("notifier-wrong"), "utf8");
    expect(log).toMatch(/cannot be decrypted with this SECRETS_KEY/);
    expect(log).not.toContain(secret.slice("whsec_".length));
    expect(rx.requests.slice(before).filter((r) => r.path === "/sealed")).toEqual([]);

    await sys.kill("notifier-wrong");
    await sys.restart("notifier-1");
    await rx.until(() => rx.deliveredIds(sealedId).includes(held), "the held callback");
    expect(verifies(secret, callbackOf(held, "/sealed"))).toBe(true);
  });
});
