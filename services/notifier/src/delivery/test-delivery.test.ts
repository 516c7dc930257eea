import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, type SubscriptionSettings, type WebhookBody } from "@evb/domain";
import type { PostResult } from "./callback-transport.ts";
import { TestDeliveries } from "./test-delivery.ts";
import { WebhookSigner } from "./webhook-signer.ts";

const REQ = {
  requestId: "3f9d2c41-8b7e-4a15-9c0d-6e2a71b5f804",
  subscriptionId: "sub-1",
  url: "http://r.example/cb",
  variant: "M" as const,
  topic: "orders/+",
};

function deliveries(settings: () => Promise<SubscriptionSettings>, answer: PostResult) {
  const posts: { url: string; body: WebhookBody; headers: Record<string, string> }[] = [];
  let t = 1_000;
  const tests = new TestDeliveries({
    redis: {} as never,
    prefix: "p",
    settings: { get: settings },
    transport: {
      post: async (url, body, headers) => {
        posts.push({ url, body, headers });
        t += 7;
        return answer;
      },
    },
    signer: new WebhookSigner(["whsec_ZGVwbG95bWVudA=="]),
    logger: { info() {}, warn() {} } as never,
    now: () => t,
  });
  return { tests, posts };
}

describe("a test delivery", () => {
  it("posts the marked test event once with the subscription's headers, and answers what came back", async () => {
    const s = { ...DEFAULT_SETTINGS, headers: '{"x-token":"t1"}' };
    const { tests, posts } = deliveries(async () => s, { delivered: true, status: 204, excerpt: null });
    const r = await tests.send(REQ);
    expect(r).toEqual({
      requestId: REQ.requestId,
      eventId: `test_${REQ.requestId}`,
      delivered: true,
      httpStatus: 204,
      durationMs: 7,
      error: null,
      excerpt: null,
    });
    expect(posts).toHaveLength(1);
    expect(posts[0]?.headers).toMatchObject({ "x-token": "t1", "webhook-test": "true", "webhook-id": `msg_sub-1_test_${REQ.requestId}` });
    expect(posts[0]?.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(JSON.parse(String(posts[0]?.body))).toMatchObject({ subscriptionId: "sub-1", event: { topic: "orders/+" } });
  });

  it("in the raw body mode the test content is the body", async () => {
    const { tests, posts } = deliveries(async () => ({ ...DEFAULT_SETTINGS, bodyMode: "raw" }), {
      delivered: true,
      status: 200,
      excerpt: "ok",
    });
    await tests.send(REQ);
    expect(JSON.parse(Buffer.from(posts[0]?.body as Uint8Array).toString("utf8"))).toMatchObject({ test: true });
    expect(posts[0]?.headers).toMatchObject({ "content-type": "application/json", "evb-event-id": `test_${REQ.requestId}` });
  });

  it("sends nothing when the subscription's own secret cannot be opened, rather than unsigned", async () => {
    const { tests, posts } = deliveries(
      async () => {
        throw new Error("SECRETS_KEY is not set");
      },
      { delivered: true, status: 200, excerpt: null },
    );
    const r = await tests.send(REQ);
    expect(r).toMatchObject({ delivered: false, httpStatus: null, error: "not sent: SECRETS_KEY is not set" });
    expect(posts).toHaveLength(0);
  });

  it("answers a failed attempt with its status and error", async () => {
    const failed: PostResult = {
      delivered: false,
      failure: "SERVER_ERROR",
      status: 500,
      retryAfter: undefined,
      error: "HTTP 500",
      excerpt: "boom",
    };
    const { tests } = deliveries(async () => DEFAULT_SETTINGS, failed);
    expect(await tests.send(REQ)).toMatchObject({ delivered: false, httpStatus: 500, error: "HTTP 500", excerpt: "boom" });
  });
});
