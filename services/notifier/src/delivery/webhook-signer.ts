import { parseSigningSecret, signWebhook, type WebhookBody } from "@evb/domain";

/**
 * Standard Webhooks headers for one POST: `webhook-id` (the same on every retry of one event to
 * one subscription, so receivers can de-duplicate what at-least-once delivery may repeat; sent
 * whether or not signing is on), and with secrets `webhook-timestamp` (seconds) and
 * `webhook-signature` ("v1,<base64 HMAC-SHA256>" per configured key, newest first, so receivers
 * keep verifying while a key is rotated).
 */
export class WebhookSigner {
  private readonly keys: Buffer[];

  constructor(secrets: readonly string[]) {
    this.keys = secrets.map(parseSigningSecret);
  }

  get enabled(): boolean {
    return this.keys.length > 0;
  }

  /**
   * `resend`: the POST is an admin/resendEvent request's (number n). It is marked
   * `webhook-resend: true` (the event comes out of order), and its `webhook-id` is its own,
   * `msg_<subscriptionId>_<eventId>_resend<n>`, the same on every retry of that resend: a receiver
   * that drops repeats by id still takes a resend it was asked to take, and the signature (over
   * the id) covers the mark. `keys`: the subscription's own signing keys (newest first), which
   * replace the deployment's; during a rotation's grace period both its secrets sign.
   */
  headers(
    subscriptionId: string,
    eventId: string,
    body: WebhookBody,
    nowMs: number,
    resend?: number,
    keys?: readonly Buffer[] | null,
  ): Record<string, string> {
    const id = webhookId(subscriptionId, eventId, resend);
    const signed = this.signed(id, body, nowMs, keys);
    return resend === undefined ? signed : { ...signed, "webhook-resend": "true" };
  }

  /**
   * The headers of a POST whose `webhook-id` is `id` (an alert to the owner's, say), signed with
   * `keys` (a subscription's own) or else the deployment's; unsigned without any.
   */
  signed(id: string, body: WebhookBody, nowMs: number, keys?: readonly Buffer[] | null): Record<string, string> {
    const signing = keys ?? this.keys;
    if (signing.length === 0) return { "webhook-id": id };
    const timestampSec = Math.floor(nowMs / 1000);
    return {
      "webhook-id": id,
      "webhook-timestamp": String(timestampSec),
      "webhook-signature": signWebhook({ id, timestampSec, body, keys: signing }),
    };
  }
}

function webhookId(subscriptionId: string, eventId: string, resend: number | undefined): string {
  return resend === undefined ? `msg_${subscriptionId}_${eventId}` : `msg_${subscriptionId}_${eventId}_resend${resend}`;
}
