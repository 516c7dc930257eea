import { z } from "zod";
import { ConfigError, intVar, parseEnv, sharedEnv } from "@evb/config";
import { parseSigningSecret } from "@evb/domain";
import { callbackEnv } from "@evb/subscriptions";

export const NotifierEnv = z.object({
  ...sharedEnv,
  ...callbackEnv,
  HOST: z.string().min(1).default("127.0.0.1").describe("address the health endpoint listens on"),
  HEALTH_PORT: intVar(0, 0, 65535, "port of the /health endpoint (0 = a free port, logged at start)"),
  NOTIFIER_POLL_MS: intVar(1_000, 50, 60_000, "milliseconds between ledger polls for undispatched blocks, 50–60000"),
  NOTIFIER_SWEEP_MS: intVar(
    10_000,
    100,
    600_000,
    "milliseconds between sweeps that restart delivery of any backlog without a job, 100–600000",
  ),
  DELIVERY_CHECKPOINT_MS: intVar(
    5_000,
    100,
    600_000,
    "milliseconds between delivery checkpoints written to Kafka; after a lost ledger callbacks resume from the last one, so at most this long of callbacks is sent again, 100–600000",
  ),
  DISPATCH_STUCK_MS: intVar(
    60_000,
    1_000,
    3_600_000,
    "milliseconds the dispatch cursor may stand still while the ledger is ahead of it before /readyz reports the notifier not ready, 1000–3600000",
  ),
  DISPATCH_BATCH_EVENTS: intVar(5_000, 1, 1_000_000, "events matched per dispatch transaction, 1–1000000"),
  DISPATCH_BATCH_ROWS: intVar(
    50_000,
    1,
    1_000_000,
    "backlog rows (events × matching subscriptions) written per dispatch transaction, 1–1000000; lower it if a dispatch run needs too much memory",
  ),
  DELIVERY_TIMEOUT_MS: intVar(
    5_000,
    100,
    120_000,
    "milliseconds one callback attempt may take (DNS lookup + connect + response), 100–120000",
  ),
  DELIVERY_CONCURRENCY: intVar(64, 1, 10_000, "subscriptions one notifier delivers to at once, 1–10000"),
  DELIVERY_LOCK_MS: intVar(
    30_000,
    1_000,
    600_000,
    "milliseconds after which a dead notifier's running deliveries are taken over, 1000–600000; keep it above DELIVERY_TIMEOUT_MS",
  ),
  DELIVERY_SLICE_EVENTS: intVar(100, 1, 100_000, "deliveries one subscription gets before yielding its slot to others, 1–100000"),
  DELIVERY_RECORD_EVENTS: intVar(
    50,
    1,
    1_000,
    "callbacks of one subscription recorded together in one Postgres write, 1–1000; a crashed notifier re-sends at most this many per subscription (1 records each callback alone)",
  ),
  DELIVERY_SLICE_MS: intVar(
    10_000,
    100,
    600_000,
    "milliseconds one subscription may keep a delivery slot before yielding it to others, 100–600000",
  ),
  DELIVERY_WINDOW: intVar(
    1,
    1,
    256,
    "callbacks of one subscription in flight at once, 1–256; 1 sends each only after the previous one's 2xx, above 1 sends the next while earlier ones are answered (each after the previous request was written; see docs/delivery.md for what that means for order)",
  ),
  RETRY_BASE_MS: intVar(1_000, 1, 3_600_000, "milliseconds before the first retry of a failed callback (doubles per attempt), 1–3600000"),
  RETRY_MAX_MS: intVar(300_000, 1, 86_400_000, "cap in milliseconds of the delay between two retries, 1–86400000"),
  RETRY_MAX_ATTEMPTS: intVar(20, 1, 1_000, "failed attempts of one event before it is dead-lettered, 1–1000"),
  DELIVERY_DISABLE_AFTER_MS: intVar(
    432_000_000,
    1_000,
    31_536_000_000,
    "milliseconds a subscription may fail without a single success before it is suspended (dead-lettered) even with retries left, 1000–31536000000 (default 5 days)",
  ),
  DELIVERY_ATTEMPTS_KEEP: intVar(
    1_000,
    0,
    1_000_000,
    "callback attempts kept per subscription in the delivery-attempt log (admin/deliveryAttempts), 0–1000000; 0 records none",
  ),
  DELIVERY_ATTEMPTS_KEEP_MS: intVar(
    604_800_000,
    60_000,
    31_536_000_000,
    "milliseconds a callback attempt stays in the delivery-attempt log, 60000–31536000000 (default 7 days)",
  ),
  TABLE_MAINTENANCE_MS: intVar(
    60_000,
    0,
    86_400_000,
    "milliseconds between rounds of VACUUM (ANALYZE) over the tables that churn (backlog, attempt log, subscriptions), run by one notifier at a time, so they stay bounded when Postgres runs without autovacuum, 0–86400000; 0 runs none",
  ),
  TABLE_MAINTENANCE_TIMEOUT_MS: intVar(
    120_000,
    1_000,
    3_600_000,
    "milliseconds one VACUUM of a round may take before Postgres cancels it (the round is logged as failing and the next one tries again), 1000–3600000",
  ),
  METRICS_POLL_MS: intVar(
    5_000,
    100,
    600_000,
    "milliseconds between refreshes of the /metrics gauges read from Postgres (backlog, dead letters, dispatch lag), 100–600000",
  ),
  ALERT_FAILING_AFTER_ATTEMPTS: intVar(
    5,
    1,
    1_000,
    "failed attempts in a row of a subscription's head event after which its owner's alert URL gets subscription.failing (once per run of failures), 1–1000",
  ),
  ALERT_MAX_ATTEMPTS: intVar(
    20,
    1,
    1_000,
    "tries of one alert to an owner's alert URL before it is given up (backoff as RETRY_BASE_MS and RETRY_MAX_MS), 1–1000",
  ),
  ALERT_POLL_MS: intVar(1_000, 50, 60_000, "milliseconds between looks for alerts to the owners waiting to be sent, 50–60000"),
  RETRY_AFTER_MAX_MS: intVar(600_000, 0, 86_400_000, "cap in milliseconds on a receiver's Retry-After, 0–86400000"),
  WEBHOOK_SECRETS: z
    .string()
    .default("")
    .transform((v, ctx) => {
      const list = v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      for (const s of list) {
        try {
          parseSigningSecret(s);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: (err as Error).message });
          return z.NEVER;
        }
      }
      return list;
    })
    .describe("comma-separated signing secrets, newest first, each whsec_<base64 key>; empty = unsigned callbacks"),
});
export type NotifierConfig = z.infer<typeof NotifierEnv>;

export function loadNotifierConfig(env: NodeJS.ProcessEnv = process.env): NotifierConfig {
  const config = parseEnv("notifier", NotifierEnv, env);
  // A lock shorter than one attempt would hand a live delivery to a second worker mid-POST.
  if (config.DELIVERY_LOCK_MS <= config.DELIVERY_TIMEOUT_MS) {
    throw new ConfigError("notifier", [
      `DELIVERY_LOCK_MS (${config.DELIVERY_LOCK_MS}) must be above DELIVERY_TIMEOUT_MS (${config.DELIVERY_TIMEOUT_MS}). Fix: raise DELIVERY_LOCK_MS, e.g. to 6× the timeout`,
    ]);
  }
  return config;
}
