import { silentLogger } from "@evb/domain";
import type { ClaimedAlert } from "@evb/storage";
import { parseTraceparent } from "@evb/telemetry";
import { describe, expect, it } from "vitest";
import { inMemoryTracing } from "../../../../test/support/in-memory-tracing.ts";
import type { PostResult } from "../delivery/callback-transport.ts";
import { WebhookSigner } from "../delivery/webhook-signer.ts";
import { afterTry, type AlertOutbox, AlertSender } from "./alert-sender.ts";

const retry = { baseMs: 1_000, maxMs: 60_000, maxAttempts: 3 };
const ok: PostResult = { delivered: true, status: 200, excerpt: null };
const refused: PostResult = {
  delivered: false,
  failure: "SERVER_ERROR",
  status: 503,
  retryAfter: undefined,
  error: "HTTP 503",
  excerpt: null,
};

function claimed(over: Partial<ClaimedAlert> = {}): ClaimedAlert {
  return {
    id: 7,
    type: "subscription.suspended",
    subscriptionId: "s1",
    groupId: "1",
    topic: "orders",
    consecutiveFailures: 4,
    lastError: "HTTP 503",
    occurredAt: 1_000,
    attempts: 1,
    url: "http://alerts.example/hook",
    signing: { secret: null, previousSecret: null, previousUntil: null },
    traceparent: null,
    ...over,
  };
}

/** An outbox that hands out `alerts` once and records what the sender did with them. */
function fakeOutbox(alerts: ClaimedAlert[]) {
  const log: string[] = [];
  const outbox: AlertOutbox = {
    claim: async () => alerts.splice(0),
    done: async (id) => void log.push(`done ${id}`),
    retryAt: async (id, at) => void log.push(`retry ${id} at ${at}`),
  };
  return { outbox, log };
}

function sender(outbox: AlertOutbox, post: (url: string, body: string, headers: Record<string, string>) => Promise<PostResult>) {
  const observed: string[] = [];
  const s = new AlertSender({
    outbox,
    transport: { post },
    signer: new WebhookSigner(["whsec_ZGVwbG95bWVudA=="]),
    retry,
    pollMs: 1_000,
    claimMs: 10_000,
    observe: (type, outcome) => observed.push(`${type} ${outcome}`),
    logger: silentLogger,
    now: () => 5_000,
    random: () => 0,
  });
  return { s, observed };
}

describe("afterTry", () => {
  it("forgets an alert answered 2xx, retries a failed one with backoff, gives up after the last try or without a URL", () => {
    expect(afterTry({ attempts: 1 }, ok, retry, 0, 0)).toEqual({ outcome: "delivered" });
    expect(afterTry({ attempts: 2 }, refused, retry, 0, 0)).toEqual({ outcome: "retried", at: 1_000 });
    expect(afterTry({ attempts: 3 }, refused, retry, 0, 0)).toEqual({ outcome: "dropped" });
    expect(afterTry({ attempts: 1 }, null, retry, 0, 0)).toEqual({ outcome: "dropped" });
  });
});

describe("AlertSender", () => {
  it("posts the alert's body signed with the deployment's secret under a per-alert webhook-id, then forgets it", async () => {
    const { outbox, log } = fakeOutbox([claimed()]);
    const posts: { url: string; body: string; headers: Record<string, string> }[] = [];
    const { s, observed } = sender(outbox, async (url, body, headers) => {
      posts.push({ url, body, headers });
      return ok;
    });
    expect(await s.sendDue()).toBe(1);
    expect(posts[0]?.url).toBe("http://alerts.example/hook");
    expect(JSON.parse(posts[0]?.body ?? "")).toMatchObject({ type: "subscription.suspended", data: { subscriptionId: "s1" } });
    expect(posts[0]?.headers).toMatchObject({ "webhook-id": "msg_alert_7", "webhook-timestamp": "5" });
    expect(posts[0]?.headers["webhook-signature"]).toMatch(/^v1,/);
    expect(log).toEqual(["done 7"]);
    expect(observed).toEqual(["subscription.suspended delivered"]);
  });

  it("signs with the subscription's own secret instead of the deployment's", async () => {
    const signatures: string[] = [];
    const post = async (_u: string, _b: string, h: Record<string, string>) => {
      signatures.push(h["webhook-signature"] ?? "");
      return ok;
    };
    const own = { secret: "whsec_b3du", previousSecret: null, previousUntil: null };
    await sender(fakeOutbox([claimed({ signing: own })]).outbox, post).s.sendDue();
    await sender(fakeOutbox([claimed()]).outbox, post).s.sendDue();
    expect(signatures[0]).not.toBe(signatures[1]);
  });

  it("does not post an alert whose subscription's secret cannot be decrypted: a failed try, never signed otherwise", async () => {
    const { outbox, log } = fakeOutbox([claimed({ signingError: "the signing secret of subscription s1: wrong SECRETS_KEY" })]);
    const posted: string[] = [];
    const { s, observed } = sender(outbox, async (url) => {
      posted.push(url);
      return ok;
    });
    await s.sendDue();
    expect(posted).toEqual([]);
    expect(log).toEqual(["retry 7 at 5500"]);
    expect(observed).toEqual(["subscription.suspended retried"]);
  });

  it("reschedules a failed try and drops an alert whose subscription has no alert URL any more, without posting", async () => {
    const { outbox, log } = fakeOutbox([claimed({ id: 1 }), claimed({ id: 2, url: null, type: "subscription.recovered" })]);
    const posted: string[] = [];
    const { s, observed } = sender(outbox, async (url) => {
      posted.push(url);
      return refused;
    });
    await s.sendDue();
    expect(posted).toEqual(["http://alerts.example/hook"]);
    expect(log.sort()).toEqual(["done 2", "retry 1 at 5500"]);
    expect(observed.sort()).toEqual(["subscription.recovered dropped", "subscription.suspended retried"]);
  });
});

describe("AlertSender with tracing on", () => {
  it("sends each try under an `alert send` span, a child of the delivery attempt that raised it, named by the POST's traceparent", async () => {
    const tracing = inMemoryTracing();
    try {
      const raisedBy = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const sent: (string | undefined)[] = [];
      const post = async (_u: string, _b: string, h: Record<string, string>) => {
        sent.push(h.traceparent);
        return refused;
      };
      await sender(fakeOutbox([claimed({ traceparent: raisedBy })]).outbox, post).s.sendDue();
      const [span] = tracing.spans();
      expect(span?.name).toBe("alert send");
      expect(span?.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
      expect(span?.status).toMatchObject({ code: 2, message: "HTTP 503" });
      expect(parseTraceparent(sent[0])).toEqual({
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: span?.spanContext().spanId,
        traceFlags: 1,
      });
      // An alert raised without tracing starts a trace of its own.
      await sender(fakeOutbox([claimed({ id: 8 })]).outbox, post).s.sendDue();
      expect(tracing.spans()[1]?.parentSpanContext).toBeUndefined();
      expect(parseTraceparent(sent[1])).toBeDefined();
    } finally {
      tracing.stop();
    }
  });
});
