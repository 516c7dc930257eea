import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseSigningSecret, signWebhook, verifyWebhook } from "./webhook-signature.ts";

// The Standard Webhooks example secret; any base64 key would do.
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const KEY = Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64");
const OTHER = parseSigningSecret("whsec_c2Vjb25kLWtleS1mb3Itcm90YXRpb24=");
const ID = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TS = 1614265330;
const BODY = '{"subscriptionId":"3f9d2c41-8b7e-4a15-9c0d-6e2a71b5f804","event":{"topic":"com.event.test","content":"aGVsbG8="}}';

describe("parseSigningSecret", () => {
  it("decodes the base64 part of a whsec_ secret", () => {
    expect(parseSigningSecret(SECRET).equals(KEY)).toBe(true);
    expect(KEY).toHaveLength(24);
  });

  it("uses any other string as raw UTF-8 bytes", () => {
    expect(parseSigningSecret("plain secret ü").equals(Buffer.from("plain secret ü", "utf8"))).toBe(true);
  });

  it.each([
    ["", /empty/],
    ["whsec_", /not padded standard base64/],
    ["whsec_abc", /not padded standard base64/],
    ["whsec_ab!d", /not padded standard base64/],
  ])("rejects %j without echoing the key", (secret, message) => {
    expect(() => parseSigningSecret(secret)).toThrow(message);
    const key = secret.slice("whsec_".length);
    if (key !== "") expect(() => parseSigningSecret(secret)).not.toThrow(key);
  });
});

describe("signWebhook", () => {
  it("matches an HMAC-SHA256 over id.timestamp.body computed independently", () => {
    const expected = createHmac("sha256", KEY).update(`${ID}.${TS}.${BODY}`).digest("base64");
    expect(signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [KEY] })).toBe(`v1,${expected}`);
  });

  it("signs a body of bytes over the bytes themselves, as the same text would be signed", () => {
    const bytes = Buffer.from([0x7b, 0xff, 0x00, 0x7d]);
    const expected = createHmac("sha256", KEY)
      .update(Buffer.concat([Buffer.from(`${ID}.${TS}.`), bytes]))
      .digest("base64");
    expect(signWebhook({ id: ID, timestampSec: TS, body: bytes, keys: [KEY] })).toBe(`v1,${expected}`);
    expect(signWebhook({ id: ID, timestampSec: TS, body: Buffer.from(BODY), keys: [KEY] })).toBe(
      signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [KEY] }),
    );
  });

  it("reproduces the example vector published with the Standard Webhooks scheme", () => {
    const header = signWebhook({ id: ID, timestampSec: TS, body: '{"test": 2432232314}', keys: [parseSigningSecret(SECRET)] });
    expect(header).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("signs non-ASCII bodies as UTF-8", () => {
    const body = '{"content":"中国"}';
    const expected = createHmac("sha256", KEY)
      .update(Buffer.from(`${ID}.${TS}.${body}`, "utf8"))
      .digest("base64");
    expect(signWebhook({ id: ID, timestampSec: TS, body, keys: [KEY] })).toBe(`v1,${expected}`);
  });

  it("gives one signature per key during rotation, new key first, either of which verifies", () => {
    const header = signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [OTHER, KEY] });
    const parts = header.split(" ");
    expect(parts).toHaveLength(2);
    expect(parts[0]).toBe(signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [OTHER] }));
    expect(parts[1]).toBe(signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [KEY] }));
    for (const keys of [[KEY], [OTHER]]) {
      expect(verifyWebhook({ id: ID, timestampSec: TS, body: BODY, header, keys, nowSec: TS })).toBe(true);
    }
  });

  it("refuses to sign without a key or with a fractional timestamp", () => {
    expect(() => signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [] })).toThrow(/at least one key/);
    expect(() => signWebhook({ id: ID, timestampSec: TS + 0.5, body: BODY, keys: [KEY] })).toThrow(/whole seconds/);
  });
});

describe("verifyWebhook", () => {
  const header = signWebhook({ id: ID, timestampSec: TS, body: BODY, keys: [KEY] });
  const base = { id: ID, timestampSec: TS, body: BODY, header, keys: [KEY], nowSec: TS };

  it("accepts the genuine delivery", () => {
    expect(verifyWebhook(base)).toBe(true);
  });

  it("rejects a tampered body, id or timestamp", () => {
    expect(verifyWebhook({ ...base, body: `${BODY} ` })).toBe(false);
    expect(verifyWebhook({ ...base, id: `${ID}x` })).toBe(false);
    expect(verifyWebhook({ ...base, timestampSec: TS + 1 })).toBe(false);
  });

  it("rejects the wrong key", () => {
    expect(verifyWebhook({ ...base, keys: [OTHER] })).toBe(false);
    expect(verifyWebhook({ ...base, keys: [] })).toBe(false);
  });

  it("rejects a stale or future timestamp beyond the tolerance, accepts at the edge", () => {
    expect(verifyWebhook({ ...base, nowSec: TS + 300 })).toBe(true);
    expect(verifyWebhook({ ...base, nowSec: TS + 301 })).toBe(false);
    expect(verifyWebhook({ ...base, nowSec: TS - 301 })).toBe(false);
    expect(verifyWebhook({ ...base, nowSec: TS + 30, toleranceSec: 10 })).toBe(false);
    expect(verifyWebhook({ ...base, nowSec: Number.NaN })).toBe(false);
  });

  it("skips other versions and malformed parts but still finds a good v1", () => {
    const sig = header.slice(3);
    expect(verifyWebhook({ ...base, header: `v1a,${sig} garbage v1,!!! ${header}` })).toBe(true);
    expect(verifyWebhook({ ...base, header: `v2,${sig}` })).toBe(false);
    expect(verifyWebhook({ ...base, header: "" })).toBe(false);
    expect(verifyWebhook({ ...base, header: `v1,${sig.slice(0, -4)}` })).toBe(false);
  });
});
