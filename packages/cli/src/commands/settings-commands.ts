import type { SettingsUpdate, SubscriptionSettings } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";

/** Each settings flag and the setting it sets. */
const FLAGS = {
  "max-rate": "maxRate",
  "retry-max-attempts": "retryMaxAttempts",
  "retry-base-ms": "retryBaseMs",
  "retry-max-ms": "retryMaxMs",
  window: "deliveryWindow",
} as const satisfies Record<string, keyof SettingsUpdate>;

/**
 * The settings the flags ask for, of `sub add` and `sub settings` alike (`--max-rate 5`,
 * `--window default`: back to the broker's); `--paused` pauses a new subscription;
 * `--alert-url URL` ("none": no alerts). The broker checks the bounds and the URL (100513, 100502).
 */
export function settingsFlags(ctx: CliContext): SettingsUpdate {
  const update: SettingsUpdate = {};
  for (const [flag, setting] of Object.entries(FLAGS)) {
    const raw = ctx.flags[flag as keyof typeof FLAGS];
    if (raw === undefined) continue;
    const n = raw === "default" ? null : Number(raw);
    if (n !== null && !Number.isFinite(n)) throw new UsageError(`--${flag} must be a number or "default", not "${raw}"`);
    update[setting] = n;
  }
  if (ctx.flags.paused) update.paused = true;
  const alertUrl = ctx.flags["alert-url"];
  if (alertUrl !== undefined) update.alertUrl = alertUrl === "none" ? null : alertUrl;
  return update;
}

function shown(s: SubscriptionSettings): string {
  const or = (v: number | null, what: string) => (v === null ? `${what} (the broker's)` : String(v));
  const lines = [
    `subscription ${s.subscriptionId}${s.paused ? ` — PAUSED since ${s.pausedTimeStamp}` : ""}`,
    `max rate:       ${s.maxRate === null ? "no limit" : `${s.maxRate}/s`}`,
    `retry attempts: ${or(s.retryMaxAttempts, "RETRY_MAX_ATTEMPTS")}`,
    `retry delays:   ${or(s.retryBaseMs, "RETRY_BASE_MS")} … ${or(s.retryMaxMs, "RETRY_MAX_MS")} ms`,
    `window:         ${or(s.deliveryWindow, "DELIVERY_WINDOW")}`,
    `signing:        ${s.signing === "own" ? "its own secret" : "the broker's WEBHOOK_SECRETS"}${
      s.previousSecretUntil === null ? "" : ` (the previous one too, until ${new Date(s.previousSecretUntil).toISOString()})`
    }`,
    `alerts to:      ${s.alertUrl ?? "none"}`,
  ];
  if (s.secret !== undefined) lines.push("", `new secret (shown once, keep it): ${s.secret}`);
  return lines.join("\n");
}

/**
 * `evb sub settings <id> [--max-rate N] [--retry-max-attempts N] [--retry-base-ms MS]
 * [--retry-max-ms MS] [--window N] [--alert-url URL|none]` (reads them without flags), `evb sub pause <id>`,
 * `evb sub resume <id>`, `evb sub rotate-secret <id> [--grace-ms MS]` (admin/subscriptionSettings).
 */
export async function settingsCommand(ctx: CliContext, sub: "settings" | "pause" | "resume" | "rotate-secret"): Promise<number> {
  const id = ctx.arg(1, "subscriptionId");
  let s: SubscriptionSettings;
  if (sub === "rotate-secret") {
    const grace = ctx.flags["grace-ms"];
    s = await ctx.client.rotateSigningSecret(id, grace === undefined ? undefined : ctx.int("grace-ms", grace));
  } else {
    const update = sub === "settings" ? settingsFlags(ctx) : { paused: sub === "pause" };
    s = await ctx.client.subscriptionSettings(id, update);
  }
  ctx.print(s, () => shown(s));
  return EXIT.OK;
}
