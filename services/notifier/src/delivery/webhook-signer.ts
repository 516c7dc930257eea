import { parseSigningSecret, signWebhook } from "@evb/domain";

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

  headers(subscriptionId: string, eventId: string, body: string, nowMs: number): Record<string, string> {
    const id = webhookId(subscriptionId, eventId);
    if (this.keys.length === 0) return { "webhook-id": id };
    const timestampSec = Math.floor(nowMs / 1000);
    return {
      "webhook-id": id,
      "webhook-timestamp": String(timestampSec),
      "webhook-signature": signWebhook({ id, timestampSec, body, keys: this.keys }),
    };
  }
}

function webhookId(subscriptionId: string, eventId: string): string {
  return `msg_${subscriptionId}_${eventId}`;
}
