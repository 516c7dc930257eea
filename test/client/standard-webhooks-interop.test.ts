import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../../packages/client/src/verify-webhook.ts";
import { WebhookSigner } from "../../services/notifier/src/delivery/webhook-signer.ts";

// The broker signs callbacks (services/notifier, through signWebhook of @evb/domain) and the client
// verifies them; both are checked here against the reference library of the Standard Webhooks
// spec, so a receiver may use either, whichever side signed. standardwebhooks checks its 5-minute
// tolerance against the real clock, so the messages are signed now.
const secret = `whsec_${randomBytes(32).toString("base64")}`;
const body = JSON.stringify({
  subscriptionId: "3f0c2a4e-9a51-4d2b-8f0e-0d6c1b7a9e21",
  event: { topic: "orders/eu", content: "aGVsbG8g5LiW55WM", extensions: { "event-format": "text" }, eventId: "df09ed59-1-1" },
});
const nowMs = () => Date.now();

/** Our signer's headers as standardwebhooks takes them (every value a string). */
function brokerHeaders(signer: WebhookSigner, payload: string): Record<string, string> {
  return signer.headers("3f0c2a4e-9a51-4d2b-8f0e-0d6c1b7a9e21", "df09ed59-1-1", payload, nowMs());
}

/** Headers as a sender using standardwebhooks would send them. */
function libraryHeaders(wh: Webhook, payload: string, id = "msg_2Lq6xJ", at = new Date()): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": wh.sign(id, at, payload),
  };
}

describe("Standard Webhooks interop (the standardwebhooks package)", () => {
  it("a callback the broker signed verifies with standardwebhooks' Webhook.verify", () => {
    const headers = brokerHeaders(new WebhookSigner([secret]), body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("during a key rotation standardwebhooks accepts the broker's callback with either secret", () => {
    const next = `whsec_${randomBytes(24).toString("base64")}`;
    const headers = brokerHeaders(new WebhookSigner([next, secret]), body);
    expect(headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    for (const s of [next, secret]) expect(new Webhook(s).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("a message standardwebhooks' Webhook.sign signed verifies with the client's verifyWebhook", () => {
    const headers = libraryHeaders(new Webhook(secret), body);
    expect(verifyWebhook({ secret, headers, body })).toMatchObject({
      ok: true,
      id: "msg_2Lq6xJ",
      payload: { event: { eventId: "df09ed59-1-1" } },
    });
    expect(verifyWebhook({ secret, headers: new Headers(headers), body: new TextEncoder().encode(body) }).ok).toBe(true);
  });

  it("a tampered body fails both ways", () => {
    const tampered = body.replace("orders/eu", "orders/us");
    const ours = brokerHeaders(new WebhookSigner([secret]), body);
    expect(() => new Webhook(secret).verify(tampered, ours)).toThrow(/No matching signature/);
    const theirs = libraryHeaders(new Webhook(secret), body);
    expect(verifyWebhook({ secret, headers: theirs, body: tampered })).toEqual({ ok: false, reason: "no signature matches the secret" });
  });

  it("a tampered timestamp fails both ways, even within the tolerance", () => {
    const shift = (h: Record<string, string>) => ({ ...h, "webhook-timestamp": String(Number(h["webhook-timestamp"]) - 1) });
    const ours = shift(brokerHeaders(new WebhookSigner([secret]), body));
    expect(() => new Webhook(secret).verify(body, ours)).toThrow(/No matching signature/);
    const theirs = shift(libraryHeaders(new Webhook(secret), body));
    expect(verifyWebhook({ secret, headers: theirs, body })).toEqual({ ok: false, reason: "no signature matches the secret" });
  });

  it("a stale timestamp fails both ways, though correctly signed", () => {
    const sixMinutesAgo = nowMs() - 6 * 60_000;
    const ours = new WebhookSigner([secret]).headers("s", "e-1-1", body, sixMinutesAgo);
    expect(() => new Webhook(secret).verify(body, ours)).toThrow(/too old/);
    const theirs = libraryHeaders(new Webhook(secret), body, "msg_old", new Date(sixMinutesAgo));
    expect(verifyWebhook({ secret, headers: theirs, body })).toEqual({ ok: false, reason: "webhook-timestamp too far from now" });
  });

  it("a secret without the whsec_ prefix is raw key bytes here; standardwebhooks agrees when told the format is raw", () => {
    // standardwebhooks reads an unprefixed string as base64; the broker and verifyWebhook read it
    // as UTF-8 bytes (docs/delivery.md). Only whsec_ secrets mean the same to both by default.
    const plain = "a plain shared secret";
    const raw = new Webhook(new TextEncoder().encode(plain), { format: "raw" });
    const ours = brokerHeaders(new WebhookSigner([plain]), body);
    expect(raw.verify(body, ours)).toEqual(JSON.parse(body));
    expect(verifyWebhook({ secret: plain, headers: libraryHeaders(raw, body), body }).ok).toBe(true);
  });
});
