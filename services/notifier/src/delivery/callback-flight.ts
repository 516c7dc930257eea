import type { BacklogItem } from "@evb/storage";
import { type BodyMode, callbackPayload, type MatchRule, type WebhookBody } from "@evb/domain";
import { tracingOn } from "@evb/telemetry";
import { tracedAttempt } from "./callback-trace.ts";
import type { PostOptions, PostResult } from "./callback-transport.ts";
import type { WebhookSigner } from "./webhook-signer.ts";

/** Sends one callback (`CallbackTransport` in production). */
export interface CallbackPoster {
  post(url: string, body: WebhookBody, headers: Record<string, string>, options?: PostOptions): Promise<PostResult>;
}

/** What a flight asks of the signer: the headers of one POST (`WebhookSigner` in production; fakes in tests). */
export type CallbackSigner = Pick<WebhookSigner, "headers">;

/** One callback in flight. */
export interface Flight {
  item: BacklogItem;
  startedAt: number;
  /** Resolves once its request is written (the next event may be sent from then on). */
  written: Promise<void>;
  result: Promise<{ result: PostResult; endedAt: number }>;
}

/** Starts one POST of `item` to subscription `id`; `written` resolves once its request is handed to the socket (or it ended). */
export function startFlight(
  o: { transport: CallbackPoster; signer: CallbackSigner },
  now: () => number,
  c: {
    id: string;
    item: BacklogItem;
    url: string;
    variant: MatchRule;
    signal?: AbortSignal;
    resend?: number;
    keys?: readonly Buffer[] | null;
    /** The subscription's custom headers (custom-headers.ts): under the broker's own, which they cannot name. */
    headers?: Readonly<Record<string, string>>;
    /** "raw": the published content is the body, the metadata in headers; absent: the envelope. */
    bodyMode?: BodyMode;
  },
): Flight {
  const { body, headers: about } = callbackPayload(c.id, c.item, c.variant, c.bodyMode ?? "envelope");
  const startedAt = now();
  let onWritten = () => {};
  const written = new Promise<void>((resolve) => {
    onWritten = resolve;
  });
  // The payload's own headers (a raw body's content type, its metadata) and the signature's last: custom headers cannot name them.
  const headers = { ...c.headers, ...about, ...o.signer.headers(c.id, c.item.eventId, body, startedAt, c.resend, c.keys) };
  const post = (more?: Record<string, string>) =>
    o.transport.post(c.url, body, more ? { ...headers, ...more } : headers, { signal: c.signal, onWritten });
  const result = (tracingOn() ? tracedAttempt(c.id, c.item, post) : post()).finally(onWritten).then((r) => ({ result: r, endedAt: now() }));
  return { item: c.item, startedAt, written, result };
}
