import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { WebhookSigner } from "./webhook-signer.ts";

describe("WebhookSigner", () => {
  it("sends a stable webhook-id even without secrets, so receivers can drop repeats", () => {
    const s = new WebhookSigner([]);
    const a = s.headers("sub-1", "abcd1234-1-1", "{}", 1_000);
    expect(a).toEqual({ "webhook-id": "msg_sub-1_abcd1234-1-1" });
    expect(s.headers("sub-1", "abcd1234-1-1", "{}", 99_000)).toEqual(a);
    expect(s.headers("sub-1", "abcd1234-2-1", "{}", 1_000)["webhook-id"]).not.toBe(a["webhook-id"]);
  });

  it("signs id.timestamp.body with every key, newest first", () => {
    const newKey = Buffer.from("new-key-bytes");
    const oldKey = Buffer.from("old-key-bytes");
    const s = new WebhookSigner([`whsec_${newKey.toString("base64")}`, `whsec_${oldKey.toString("base64")}`]);
    const h = s.headers("sub-1", "e-1-1", '{"x":1}', 1_700_000_000_999);
    expect(h["webhook-timestamp"]).toBe("1700000000");
    const sig = (k: Buffer) => `v1,${createHmac("sha256", k).update(`${h["webhook-id"]}.1700000000.{"x":1}`).digest("base64")}`;
    expect(h["webhook-signature"]).toBe(`${sig(newKey)} ${sig(oldKey)}`);
  });

  it("marks a resend with webhook-resend and its own id, the same on each retry of that resend, and signs that id", () => {
    const plain = new WebhookSigner([]);
    expect(plain.headers("sub-1", "e-1-1", "{}", 1_000, 7)).toEqual({ "webhook-id": "msg_sub-1_e-1-1_resend7", "webhook-resend": "true" });
    expect(plain.headers("sub-1", "e-1-1", "{}", 5_000, 7)["webhook-id"]).toBe("msg_sub-1_e-1-1_resend7");
    const key = Buffer.from("k");
    const h = new WebhookSigner([`whsec_${key.toString("base64")}`]).headers("sub-1", "e-1-1", "{}", 2_000, 8);
    const want = `v1,${createHmac("sha256", key).update("msg_sub-1_e-1-1_resend8.2.{}").digest("base64")}`;
    expect(h).toMatchObject({ "webhook-resend": "true", "webhook-signature": want });
  });
});
