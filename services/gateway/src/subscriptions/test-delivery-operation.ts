import {
  BrokerError,
  errorMessage,
  holdsNul,
  isBlank,
  redisKeys,
  type TestDeliveryRequest,
  TestDeliveryResult,
  testEventId,
  TIMED_OUT,
  withTimeout,
} from "@evb/domain";
import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { storageFailure } from "../http/storage-failures.ts";
import { mayConfigure } from "./settings-operation.ts";
import type { SubscriptionDeps } from "./subscription-deps.ts";

/**
 * How long the gateway waits for a notifier's answer (ms): above the default DELIVERY_TIMEOUT_MS
 * (5 s) with room to spare; a notifier with a longer timeout may answer too late, and the reply
 * then says so.
 */
const TEST_DELIVERY_WAIT_MS = 30_000;
/** Test deliveries one gateway waits for at once: each holds a Redis connection of its own while it waits. */
const MAX_WAITING = 16;

let waiting = 0;

/**
 * admin/testDelivery?subscriptionId=ID (an extension, every variant's admin shape): one marked
 * test callback to one live subscription, sent by a notifier through the subscription's real
 * delivery settings (URL, signing keys: its own or the deployment's), and answered with what the
 * receiver said (delivered, httpStatus, durationMs, error, excerpt). Not a ledger event: nothing
 * is published, counted, retried or written to the attempt log. The same callers as
 * admin/subscriptionSettings (the owner, or an `admin` key). Checks: id absent → missing
 * parameter, blank 100503; unknown, ended or not the caller's 100504. No notifier answering in
 * time, or Redis failing, is answered as an undelivered test with its reason.
 */
export function testDeliveryOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "admin/testDelivery",
    kind: "admin",
    variants: ["L", "M", "E"],
    // The owner's key tests its subscription's receiver (or an admin key; the handler checks which).
    role: "subscribe",
    failureCode: storageFailure({}),
    async handle(ctx) {
      const raw = ctx.params.required("subscriptionId");
      if (isBlank(raw)) throw BrokerError.of("SUBSCRIPTION_ID_BLANK");
      const id = raw.toLowerCase();
      const sub = holdsNul(id) ? null : await deps.store.get(id);
      if (!sub?.active || !mayConfigure(ctx, sub)) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
      const req: TestDeliveryRequest = {
        requestId: crypto.randomUUID(),
        subscriptionId: sub.id,
        url: sub.url,
        variant: sub.bodyVariant,
        topic: sub.topic,
      };
      const result = await askNotifier(deps, req);
      deps.logger.info({ subscriptionId: sub.id, delivered: result.delivered, httpStatus: result.httpStatus }, "test delivery answered");
      const { requestId: _, ...shown } = result;
      return data({ subscriptionId: sub.id, ...shown });
    },
  };
}

/** Publishes the request to the notifiers and waits for the one that took it to answer. */
async function askNotifier(deps: SubscriptionDeps, req: TestDeliveryRequest): Promise<TestDeliveryResult> {
  const unsent = (error: string): TestDeliveryResult => ({
    requestId: req.requestId,
    eventId: testEventId(req.requestId),
    delivered: false,
    httpStatus: null,
    durationMs: 0,
    error,
    excerpt: null,
  });
  if (waiting >= MAX_WAITING) return unsent(`not sent: ${MAX_WAITING} test deliveries are waiting on this gateway already; try again`);
  waiting++;
  // A blocking pop needs a connection of its own: the shared one serves every other request.
  const conn = deps.redis.duplicate({ maxRetriesPerRequest: 0, lazyConnect: true });
  try {
    const keys = redisKeys(deps.redisPrefix);
    await withTimeout(conn.connect(), 5_000);
    const listeners = await conn.publish(keys.testDeliveryChannel, JSON.stringify(req));
    if (listeners === 0) return unsent("not sent: no notifier is running");
    const seconds = TEST_DELIVERY_WAIT_MS / 1000;
    const popped = await withTimeout(conn.blpop(keys.testDeliveryReply(req.requestId), seconds), TEST_DELIVERY_WAIT_MS + 2_000);
    if (popped === TIMED_OUT || popped === null) return unsent(`no notifier answered within ${TEST_DELIVERY_WAIT_MS} ms`);
    const parsed = TestDeliveryResult.safeParse(JSON.parse(popped[1]));
    return parsed.success ? parsed.data : unsent("the notifier's answer was malformed");
  } catch (err) {
    return unsent(`not sent: Redis: ${errorMessage(err)}`);
  } finally {
    waiting--;
    conn.disconnect();
  }
}
