import { childLogger, type Logger } from "@evb/domain";
import type { NotifierConfig } from "../config.ts";
import type { NotifierMetrics } from "../notifier-metrics.ts";
import { type AlertOutbox, AlertSender, type AlertSenderOptions } from "./alert-sender.ts";

/** Room a claimed alert gets beyond one attempt's timeout before another notifier may try it, ms. */
const CLAIM_MARGIN_MS = 5_000;

/** The alert sender as the notifier's config sets it up (main.ts starts and closes it). */
export function alertSender(
  config: Pick<NotifierConfig, "ALERT_MAX_ATTEMPTS" | "ALERT_POLL_MS" | "RETRY_BASE_MS" | "RETRY_MAX_MS" | "DELIVERY_TIMEOUT_MS">,
  parts: {
    outbox: AlertOutbox;
    transport: AlertSenderOptions["transport"];
    signer: AlertSenderOptions["signer"];
    metrics: NotifierMetrics;
    logger: Logger;
  },
): AlertSender {
  return new AlertSender({
    outbox: parts.outbox,
    transport: parts.transport,
    signer: parts.signer,
    retry: { baseMs: config.RETRY_BASE_MS, maxMs: config.RETRY_MAX_MS, maxAttempts: config.ALERT_MAX_ATTEMPTS },
    pollMs: config.ALERT_POLL_MS,
    claimMs: config.DELIVERY_TIMEOUT_MS + CLAIM_MARGIN_MS,
    observe: parts.metrics.alertTried,
    logger: childLogger(parts.logger, { component: "alerts" }),
    now: Date.now,
    random: Math.random,
  });
}
