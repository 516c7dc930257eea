import type { Redis } from "ioredis";
import {
  callbackPayload,
  errorMessage,
  type Logger,
  parseHint,
  redisKeys,
  TEST_DELIVERY_HEADER,
  TestDeliveryRequest,
  type TestDeliveryResult,
  testEvent,
} from "@evb/domain";
import type { CallbackPoster, CallbackSigner } from "./callback-flight.ts";
import { type CallbackShape, callbackShapeOf, type SettingsSource } from "./own-settings.ts";

/** How long a claim and an answer are kept in Redis (ms): past any gateway's wait for it. */
const KEEP_MS = 120_000;

/** The pub/sub port (the notifier's subscriber connection). */
interface RequestSubscriber {
  on(event: "message", listener: (channel: string, message: string) => void): unknown;
  subscribe(...channels: string[]): Promise<unknown>;
}

/**
 * Sends the test deliveries the gateways ask for (admin/testDelivery): each request goes to
 * every notifier, the one that takes its claim (SET NX) posts it once, through the
 * subscription's own signing keys (or the deployment's) and the same transport as its callbacks
 * (address policy, timeout), marked `webhook-test: true`, and pushes what the receiver answered
 * to the asking gateway. Not an event: no attempt log, no retry, no counters.
 */
export class TestDeliveries {
  private readonly o: {
    redis: Redis;
    prefix: string;
    settings: SettingsSource;
    transport: CallbackPoster;
    signer: CallbackSigner;
    logger: Logger;
    now?: () => number;
  };

  constructor(o: TestDeliveries["o"]) {
    this.o = o;
  }

  async listen(sub: RequestSubscriber): Promise<void> {
    const channel = redisKeys(this.o.prefix).testDeliveryChannel;
    sub.on("message", (ch: string, message: string) => {
      if (ch !== channel) return;
      const req = parseHint(TestDeliveryRequest, message);
      if (!req) {
        this.o.logger.warn({ channel }, "ignored a malformed message");
        return;
      }
      void this.take(req).catch((err: Error) =>
        this.o.logger.warn({ subscriptionId: req.subscriptionId, err: errorMessage(err) }, "test delivery failed"),
      );
    });
    await sub.subscribe(channel);
  }

  /** Sends the request if this notifier takes its claim, and answers the gateway. */
  private async take(req: TestDeliveryRequest): Promise<void> {
    const keys = redisKeys(this.o.prefix);
    const won = await this.o.redis.set(keys.testDeliveryClaim(req.requestId), "1", "PX", KEEP_MS, "NX");
    if (won !== "OK") return;
    const result = await this.send(req);
    const reply = keys.testDeliveryReply(req.requestId);
    await this.o.redis.multi().rpush(reply, JSON.stringify(result)).pexpire(reply, KEEP_MS).exec();
    this.o.logger.info(
      { subscriptionId: req.subscriptionId, delivered: result.delivered, httpStatus: result.httpStatus, durationMs: result.durationMs },
      "test delivery sent",
    );
  }

  /** One POST of the test event, as the subscription's callbacks are posted. */
  async send(req: TestDeliveryRequest): Promise<TestDeliveryResult> {
    const now = this.o.now ?? Date.now;
    const event = testEvent(req.topic, req.requestId);
    const base = { requestId: req.requestId, eventId: event.eventId };
    let own: CallbackShape;
    try {
      own = callbackShapeOf(await this.o.settings.get(req.subscriptionId), now());
    } catch (err) {
      // Never unsigned for want of the subscription's own secret (SECRETS_KEY): nothing sent.
      return { ...base, delivered: false, httpStatus: null, durationMs: 0, error: `not sent: ${errorMessage(err)}`, excerpt: null };
    }
    const { body, headers: about } = callbackPayload(req.subscriptionId, event, req.variant, own.bodyMode ?? "envelope");
    const startedAt = now();
    const headers = {
      ...own.headers,
      ...about,
      ...this.o.signer.headers(req.subscriptionId, event.eventId, body, startedAt, undefined, own.keys),
    };
    headers[TEST_DELIVERY_HEADER] = "true";
    const r = await this.o.transport.post(req.url, body, headers);
    const durationMs = Math.max(0, now() - startedAt);
    if (r.delivered) return { ...base, delivered: true, httpStatus: r.status, durationMs, error: null, excerpt: r.excerpt };
    return { ...base, delivered: false, httpStatus: r.status, durationMs, error: r.error, excerpt: r.excerpt };
  }
}
