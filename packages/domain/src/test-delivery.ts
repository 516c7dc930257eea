import { z } from "zod";
import type { EventSource } from "./wire-event.ts";

/**
 * A test delivery (admin/testDelivery, docs/delivery.md "A test delivery"): one marked callback
 * to one subscription, through its real delivery settings, sent by a notifier (which holds the
 * deployment's signing secrets and the callback transport) and answered to the gateway through
 * Redis. Not a ledger event: nothing is published, counted, retried or logged as an attempt.
 */

/** Gateway → notifiers (pub/sub); the first notifier to claim `requestId` sends it. The secrets stay in Postgres. */
export const TestDeliveryRequest = z.object({
  requestId: z.uuid(),
  subscriptionId: z.string().min(1).max(64),
  url: z.string().min(1).max(2048),
  variant: z.enum(["M", "E"]),
  topic: z.string().max(64),
});
export type TestDeliveryRequest = z.infer<typeof TestDeliveryRequest>;

/** Notifier → the asking gateway (a list it pops): what the receiver answered. */
export const TestDeliveryResult = z.object({
  requestId: z.uuid(),
  eventId: z.string(),
  delivered: z.boolean(),
  /** The answer's status; null when none came (refused address, connection error, timeout). */
  httpStatus: z.number().int().nullable(),
  /** From the start of the attempt (resolution included) to its end. */
  durationMs: z.number().int().nonnegative(),
  error: z.string().nullable(),
  /** The start of the answer's body (at most 256 bytes). */
  excerpt: z.string().nullable(),
});
export type TestDeliveryResult = z.infer<typeof TestDeliveryResult>;

/** The test event's id: never a ledger id (those are `<hash>-<height>-<idx>`), so a receiver can tell it apart. */
export function testEventId(requestId: string): string {
  return `test_${requestId}`;
}

/** The header that marks a test delivery (signed over, as every header of the body's POST is not: the id is). */
export const TEST_DELIVERY_HEADER = "webhook-test";

/** The event a test delivery carries: the subscription's topic (a pattern as it is), a small JSON content. */
export function testEvent(topic: string, requestId: string): EventSource {
  const content = { test: true, message: "test delivery from the event broker; not a published event" };
  return {
    topic,
    content: Buffer.from(JSON.stringify(content), "utf8"),
    extensions: { "event-format": "json" },
    eventId: testEventId(requestId),
  };
}
