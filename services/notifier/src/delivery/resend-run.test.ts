import { describe, expect, it } from "vitest";
import type { ResendItem, ResendOutcome, SubscriptionRow } from "@evb/storage";
import type { PostResult } from "./callback-transport.ts";
import { type ResendContext, type ResendLedger, resendOutcome, sendResends } from "./resend-run.ts";
import type { SliceLease } from "./slice-lease.ts";
import { WebhookSigner } from "./webhook-signer.ts";

const RETRY = { baseMs: 1_000, maxMs: 60_000, maxAttempts: 3, retryAfterMaxMs: 60_000 };

describe("resendOutcome", () => {
  it("a 2xx settles the resend", () => {
    expect(resendOutcome({ resendId: 4, attempts: 1 }, true, { now: 10, random: 0 }, RETRY)).toEqual({
      resendId: 4,
      done: true,
      attempts: 1,
      nextAttemptAt: 0,
    });
  });

  it("a failure waits the backoff of its attempt count, and the budget spent drops it", () => {
    expect(resendOutcome({ resendId: 4, attempts: 0 }, false, { now: 10, random: 0 }, RETRY)).toEqual({
      resendId: 4,
      done: false,
      attempts: 1,
      nextAttemptAt: 10 + 500,
    });
    expect(resendOutcome({ resendId: 4, attempts: 2 }, false, { now: 10, random: 0 }, RETRY)).toMatchObject({ done: true, attempts: 3 });
  });
});

function item(resendId: number, eventId: string): ResendItem {
  return { resendId, attempts: 0, height: 1, idx: 0, eventId, topic: "t", content: Buffer.from("x"), extensions: {}, sealedAt: 1 };
}

describe("sendResends", () => {
  const sub = { id: "sub-1", url: "http://r.example/cb", bodyVariant: "M" } as SubscriptionRow;
  const lease = { token: 9, keep: async () => {} } as unknown as SliceLease;

  function run(answers: PostResult[], items: ResendItem[], settleOk = true) {
    const posted: Record<string, string>[] = [];
    const settled: ResendOutcome[] = [];
    const ledger: ResendLedger = {
      due: async () => items,
      settle: async (_id, token, o) => {
        expect(token).toBe(9);
        settled.push(o);
        return settleOk;
      },
    };
    const c: ResendContext = {
      deps: {
        transport: {
          post: async (_url, _body, headers) => {
            posted.push(headers);
            return answers.shift() as PostResult;
          },
        },
        signer: new WebhookSigner([]),
        logger: { info: () => {}, warn: () => {}, debug: () => {}, error: () => {} } as unknown as ResendContext["deps"]["logger"],
      },
      settings: { limits: { retry: RETRY }, logAttempts: true },
      now: () => 1_000,
      random: () => 0,
    };
    return { posted, settled, done: sendResends(c, ledger, lease, sub, { signal: undefined }) };
  }

  it("posts each due resend marked as one and settles it with its attempt for the log", async () => {
    const r = run(
      [
        { delivered: true, status: 200, excerpt: "ok" },
        { delivered: true, status: 204, excerpt: null },
      ],
      [item(1, "e-1-1"), item(2, "e-2-1")],
    );
    expect(await r.done).toBe(true);
    expect(r.posted).toEqual([
      { "webhook-id": "msg_sub-1_e-1-1_resend1", "webhook-resend": "true" },
      { "webhook-id": "msg_sub-1_e-2-1_resend2", "webhook-resend": "true" },
    ]);
    expect(r.settled.map((o) => [o.resendId, o.done, o.attempt?.status])).toEqual([
      [1, true, 200],
      [2, true, 204],
    ]);
  });

  it("stops at the first failure, which waits for its retry", async () => {
    const failed: PostResult = {
      delivered: false,
      failure: "SERVER_ERROR",
      status: 503,
      retryAfter: undefined,
      error: "HTTP 503",
      excerpt: null,
    };
    const r = run([failed], [item(1, "e-1-1"), item(2, "e-2-1")]);
    expect(await r.done).toBe(true);
    expect(r.posted).toHaveLength(1);
    expect(r.settled).toEqual([
      expect.objectContaining({ resendId: 1, done: false, attempts: 1, attempt: expect.objectContaining({ error: "resend: HTTP 503" }) }),
    ]);
  });

  it("answers false once the lease is lost (nothing more is sent)", async () => {
    const r = run([{ delivered: true, status: 200, excerpt: null }], [item(1, "e-1-1"), item(2, "e-2-1")], false);
    expect(await r.done).toBe(false);
    expect(r.posted).toHaveLength(1);
  });
});
