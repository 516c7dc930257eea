import { alertBody, alertWebhookId, type Logger, type OwnerAlertType, parseSigningSecret, signingSecretsAt } from "@evb/domain";
import type { ClaimedAlert } from "@evb/storage";
import { endSpan, startSpan, TRACEPARENT, traceparentOf, tracingOn, withSpan } from "@evb/telemetry";
import type { CallbackPoster } from "../delivery/callback-flight.ts";
import type { PostResult } from "../delivery/callback-transport.ts";
import { backoffMs } from "../delivery/retry-policy.ts";
import type { WebhookSigner } from "../delivery/webhook-signer.ts";

/** The outbox of alerts to the owners (`OwnerAlertStore` in production; a fake in the tests). */
export interface AlertOutbox {
  claim(now: number, limit: number, claimMs: number): Promise<ClaimedAlert[]>;
  done(id: number): Promise<void>;
  retryAt(id: number, at: number): Promise<void>;
}

/** How one try of an alert ended: answered 2xx, to be tried again, or given up (or nowhere to go). */
export type AlertOutcome = "delivered" | "retried" | "dropped";

/** Retries of an alert: backoff `min(maxMs, baseMs·2^(n−1))`, jittered; dropped after `maxAttempts` tries. */
export interface AlertRetry {
  baseMs: number;
  maxMs: number;
  maxAttempts: number;
}

/** What to do with an alert after a try (pure): forget it, or try again at `at`. */
export function afterTry(
  alert: Pick<ClaimedAlert, "attempts">,
  result: PostResult | null,
  retry: AlertRetry,
  now: number,
  random: number,
): { outcome: AlertOutcome; at?: number } {
  if (result === null) return { outcome: "dropped" };
  if (result.delivered) return { outcome: "delivered" };
  if (alert.attempts >= retry.maxAttempts) return { outcome: "dropped" };
  return { outcome: "retried", at: now + backoffMs(alert.attempts, retry, random) };
}

export interface AlertSenderOptions {
  outbox: AlertOutbox;
  /** The callbacks' transport: the same address policy, timeout and no redirects. */
  transport: CallbackPoster;
  /** Signs with the subscription's own secret, else the deployment's WEBHOOK_SECRETS. */
  signer: Pick<WebhookSigner, "signed">;
  retry: AlertRetry;
  /** Between looks at the outbox, ms. */
  pollMs: number;
  /** How long a claimed alert is this sender's before another may try it (ms): above one attempt's timeout. */
  claimMs: number;
  /** Alerts sent at once, at most (default 16). */
  batch?: number;
  /** Each try's outcome, for the metrics. */
  observe?: (type: OwnerAlertType, outcome: AlertOutcome) => void;
  logger: Logger;
  now: () => number;
  random: () => number;
}

/**
 * Sends the stored alerts to the owners' alert URLs, beside the deliveries and never in their way:
 * its own loop, its own (small) number of requests in flight, no subscription lease. A notifier
 * that dies with alerts claimed leaves them to any other once the claim runs out (at least once;
 * the `webhook-id` is the same on every try).
 */
export class AlertSender {
  private readonly o: AlertSenderOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private failing = false;

  constructor(o: AlertSenderOptions) {
    this.o = o;
  }

  start(): void {
    if (this.closed || this.timer || this.running) return;
    this.schedule(0);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Sends one batch of due alerts; how many were claimed. */
  async sendDue(): Promise<number> {
    const batch = this.o.batch ?? 16;
    const claimed = await this.o.outbox.claim(this.o.now(), batch, this.o.claimMs);
    await Promise.all(claimed.map((a) => this.send(a)));
    return claimed.length;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick().finally(() => {
        this.running = null;
      });
    }, ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    let full = false;
    try {
      full = (await this.sendDue()) === (this.o.batch ?? 16);
      if (this.failing) this.o.logger.info("sending alerts to owners works again");
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.o.logger.warn({ err }, "sending alerts to owners failed; trying again at the next poll");
      this.failing = true;
    }
    if (!this.closed) this.schedule(full ? 0 : this.o.pollMs);
  }

  private async send(a: ClaimedAlert): Promise<void> {
    const result = a.url === null ? null : a.signingError !== undefined ? this.unsignable(a, a.signingError) : await this.post(a, a.url);
    const next = afterTry(a, result, this.o.retry, this.o.now(), this.o.random());
    if (next.at === undefined) await this.o.outbox.done(a.id);
    else await this.o.outbox.retryAt(a.id, next.at);
    this.o.observe?.(a.type, next.outcome);
    const log = { subscriptionId: a.subscriptionId, alert: a.type, attempts: a.attempts };
    if (next.outcome === "dropped")
      this.o.logger.warn({ ...log, error: result && !result.delivered ? result.error : "no alert URL" }, "alert to the owner given up");
    else if (next.outcome === "retried" && result && !result.delivered)
      this.o.logger.debug({ ...log, error: result.error }, "alert to the owner failed; retrying");
  }

  /** An alert whose subscription's own secret cannot be opened (SECRETS_KEY): not sent, never signed otherwise; a failed try. */
  private unsignable(a: ClaimedAlert, why: string): PostResult {
    this.o.logger.error(
      { subscriptionId: a.subscriptionId, alert: a.type, error: why },
      "alert to the owner not sent: its signing secret cannot be decrypted",
    );
    return { delivered: false, failure: "OTHER", status: null, retryAfter: undefined, error: why, excerpt: null };
  }

  private post(a: ClaimedAlert, url: string): Promise<PostResult> {
    const body = alertBody(a);
    const now = this.o.now();
    const keys = signingSecretsAt(a.signing, now)?.map(parseSigningSecret) ?? null;
    const headers = this.o.signer.signed(alertWebhookId(a), body, now, keys);
    return tracingOn()
      ? tracedAlert(a, (more) => this.o.transport.post(url, body, { ...headers, ...more }))
      : this.o.transport.post(url, body, headers);
  }
}

/**
 * One try of an alert under an `alert send` span, a child of the delivery attempt that raised it
 * (its traceparent is stored with the alert; a trace of its own when there is none). The POST
 * carries a `traceparent` header naming the span. Only called with tracing on.
 */
async function tracedAlert(
  a: Pick<ClaimedAlert, "id" | "type" | "subscriptionId" | "attempts" | "traceparent">,
  post: (traceHeaders: Record<string, string>) => Promise<PostResult>,
): Promise<PostResult> {
  const span = startSpan("alert send", {
    parent: a.traceparent,
    attributes: { "evb.subscription_id": a.subscriptionId, "evb.alert": a.type, "evb.alert_id": a.id, "evb.alert_attempt": a.attempts },
  });
  const headers: Record<string, string> = span ? { [TRACEPARENT]: traceparentOf(span) } : {};
  try {
    const r = await withSpan(span, () => post(headers));
    if (r.status !== null) span?.setAttribute("http.response.status_code", r.status);
    endSpan(span, r.delivered ? undefined : new Error(r.error));
    return r;
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
}
