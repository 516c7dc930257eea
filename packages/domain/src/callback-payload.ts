import type { MatchRule } from "./topic-pattern.ts";
import type { WebhookBody } from "./webhook-signature.ts";
import { callbackBody, type EventSource } from "./wire-event.ts";

/**
 * What a callback's body is (docs/delivery.md, "The raw body mode"): "envelope", the original's
 * `{"subscriptionId","event":{…,"content":"<Base64>"}}`; "raw", the published content itself, as
 * Svix-style receivers expect, with the event's metadata in headers.
 */
export type BodyMode = "envelope" | "raw";

/** The body of one callback and the headers that describe it (beside the signature's). */
export interface CallbackPayload {
  body: WebhookBody;
  headers: Record<string, string>;
}

/** `event-format` values with a media type of their own; a value that is itself a media type is taken as it is. */
const FORMATS: Readonly<Record<string, string>> = {
  json: "application/json",
  xml: "application/xml",
  text: "text/plain; charset=utf-8",
  txt: "text/plain; charset=utf-8",
  csv: "text/csv",
  html: "text/html",
  yaml: "application/yaml",
};
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(\s*;\s*[a-z0-9_.+-]+=[a-z0-9_.+-]+)*$/i;

/** The raw body's content type: from `event-content-type`, else `event-format`, else application/octet-stream. */
export function rawContentType(extensions: Readonly<Record<string, string>>): string {
  for (const name of ["event-content-type", "event-format"]) {
    const v = extensions[name]?.trim();
    if (!v) continue;
    const known = FORMATS[v.toLowerCase()];
    if (known) return known;
    if (v.length <= 128 && MEDIA_TYPE.test(v)) return v;
  }
  return "application/octet-stream";
}

/** A header value for text that may hold anything: printable ASCII as it is, the rest (and `%`) percent-encoded (UTF-8). */
export function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c));
}

/** The body and describing headers of the callback of `ev` to subscription `subscriptionId`. */
export function callbackPayload(subscriptionId: string, ev: EventSource, variant: MatchRule, mode: BodyMode): CallbackPayload {
  if (mode === "envelope") return { body: callbackBody(subscriptionId, ev, variant), headers: {} };
  return {
    body: ev.content,
    headers: {
      "content-type": rawContentType(ev.extensions),
      "evb-event-id": headerSafe(ev.eventId),
      "evb-topic": headerSafe(ev.topic),
      "evb-subscription-id": headerSafe(subscriptionId),
    },
  };
}
