import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook } from "./verify-webhook.ts";

const key = Buffer.from("0123456789abcdef0123456789abcdef");
const secret = `whsec_${key.toString("base64")}`;
const body = JSON.stringify({ subscriptionId: "s", event: { topic: "t", content: "aGk=", extensions: {}, eventId: "e" } });

function sign(k: Buffer, id: string, ts: number, b: string): string {
  return `v1,${createHmac("sha256", k).update(`${id}.${ts}.${b}`).digest("base64")}`;
}

const headers = (sig: string, ts = 1_700_000_000) => ({ "webhook-id": "msg_1", "webhook-timestamp": String(ts), "webhook-signature": sig });

describe("verifyWebhook", () => {
  it("accepts a valid signature and returns the parsed body", () => {
    const r = verifyWebhook({ secret, headers: headers(sign(key, "msg_1", 1_700_000_000, body)), body, nowSec: 1_700_000_100 });
    expect(r).toMatchObject({ ok: true, id: "msg_1", timestampSec: 1_700_000_000, payload: { subscriptionId: "s" } });
  });
  it("accepts when any of several signatures matches any secret (rotation)", () => {
    const other = Buffer.from("another key of thirty-two bytes!");
    const sig = `v1a,zzz ${sign(other, "msg_1", 1_700_000_000, body)}`;
    const r = verifyWebhook({
      secret: [secret, `whsec_${other.toString("base64")}`],
      headers: new Headers(headers(sig)),
      body,
      nowSec: 1_700_000_000,
    });
    expect(r.ok).toBe(true);
  });
  it("rejects a tampered body, a wrong secret and a stale timestamp", () => {
    const sig = sign(key, "msg_1", 1_700_000_000, body);
    expect(verifyWebhook({ secret, headers: headers(sig), body: `${body} `, nowSec: 1_700_000_000 })).toMatchObject({ ok: false });
    expect(verifyWebhook({ secret: "whsec_AAAA", headers: headers(sig), body, nowSec: 1_700_000_000 })).toMatchObject({ ok: false });
    expect(verifyWebhook({ secret, headers: headers(sig), body, nowSec: 1_700_000_301 })).toEqual({
      ok: false,
      reason: "webhook-timestamp too far from now",
    });
  });
  it("uses a secret without the whsec_ prefix as raw bytes, as the broker does", () => {
    const sig = sign(Buffer.from("plain secret"), "msg_1", 1_700_000_000, body);
    expect(
      verifyWebhook({ secret: "plain secret", headers: headers(sig), body: new TextEncoder().encode(body), nowSec: 1_700_000_000 }).ok,
    ).toBe(true);
  });
  it("says which header is missing rather than throwing", () => {
    expect(verifyWebhook({ secret, headers: {}, body, nowSec: 0 })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("missing"),
    });
  });
});
