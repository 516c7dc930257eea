import { z } from "zod";
import { BrokerError } from "./errors.ts";
import type { BodyMode } from "./callback-payload.ts";
import { filterText, parseContentFilter } from "./content-filter.ts";
import { parseCustomHeaders } from "./custom-headers.ts";
import { isAlertUrl } from "./owner-alerts.ts";

/**
 * A subscription's own delivery settings (issue 23, item 2), pure. Every value left null takes
 * the deployment's (RETRY_MAX_ATTEMPTS, RETRY_BASE_MS, RETRY_MAX_MS, DELIVERY_WINDOW,
 * WEBHOOK_SECRETS; no rate limit), so a subscription nobody configured behaves as before.
 * Stored in `subscription_settings` (migration 022), carried in the subscription's Kafka record
 * so that a rebuilt ledger keeps them, and read by every notifier at each delivery slice.
 */
export const SubscriptionSettings = z.object({
  /** Delivers nothing while true; the backlog and the cursor are kept. */
  paused: z.boolean(),
  pausedAt: z.number().int().nullable(),
  /** Callbacks per second at most (the start of one POST to the next). */
  maxRate: z.number().positive().nullable(),
  retryMaxAttempts: z.number().int().positive().nullable(),
  retryBaseMs: z.number().int().positive().nullable(),
  retryMaxMs: z.number().int().positive().nullable(),
  deliveryWindow: z.number().int().positive().nullable(),
  /** The subscription's signing secret (`whsec_<base64>`); null: the deployment's WEBHOOK_SECRETS sign. */
  secret: z.string().nullable(),
  /** The secret before the last rotation, which signs too until `previousUntil` (epoch ms). */
  previousSecret: z.string().nullable(),
  previousUntil: z.number().int().nullable(),
  /** Where alerts to the owner go (owner-alerts.ts); null: none are sent. Absent in records written before it. */
  alertUrl: z.string().nullable().default(null),
  /**
   * Custom headers sent with every callback, as JSON text (custom-headers.ts); sealed at rest as
   * the secrets are, so held as text here; null: none. Absent in records written before them.
   */
  headers: z.string().nullable().default(null),
  /** What a callback's body is (callback-payload.ts). Absent in records written before it: the envelope. */
  bodyMode: z.enum(["envelope", "raw"]).default("envelope"),
  /** The content filter (content-filter.ts) as JSON text; null: every event of the topic. Absent in records written before it. */
  filter: z.string().nullable().default(null),
});
export type SubscriptionSettings = z.infer<typeof SubscriptionSettings>;

export const DEFAULT_SETTINGS: SubscriptionSettings = {
  paused: false,
  pausedAt: null,
  maxRate: null,
  retryMaxAttempts: null,
  retryBaseMs: null,
  retryMaxMs: null,
  deliveryWindow: null,
  secret: null,
  previousSecret: null,
  previousUntil: null,
  alertUrl: null,
  headers: null,
  bodyMode: "envelope",
  filter: null,
};

/** The numeric settings and their bounds (inclusive); the error message of SETTING_INVALID says the same. */
const SETTING_BOUNDS = {
  maxRate: { min: 0.01, max: 10_000, int: false },
  retryMaxAttempts: { min: 1, max: 100, int: true },
  retryBaseMs: { min: 1, max: 86_400_000, int: true },
  retryMaxMs: { min: 1, max: 604_800_000, int: true },
  deliveryWindow: { min: 1, max: 256, int: true },
} as const;
type NumericSetting = keyof typeof SETTING_BOUNDS;
const NUMERIC = Object.keys(SETTING_BOUNDS) as NumericSetting[];

/** How long the old secret keeps signing after a rotation, by default (ms): one day. */
const DEFAULT_SECRET_GRACE_MS = 86_400_000;
const MAX_SECRET_GRACE_MS = 2_592_000_000;

/**
 * What a caller asked to change: an absent key is left as it is, null goes back to the
 * deployment's value. `rotateSecret` makes a new secret (the old one signs for `graceMs` more);
 * `dropSecret` goes back to the deployment's secrets at once.
 */
export interface SettingsChange {
  paused?: boolean;
  maxRate?: number | null;
  retryMaxAttempts?: number | null;
  retryBaseMs?: number | null;
  retryMaxMs?: number | null;
  deliveryWindow?: number | null;
  rotateSecret?: { graceMs: number };
  dropSecret?: boolean;
  /** Where alerts to the owner go; null: none. */
  alertUrl?: string | null;
  /** Custom headers as JSON text (checked, names lower-cased); null: none. */
  headers?: string | null;
  bodyMode?: BodyMode;
  /** The content filter as JSON text (checked); null: none. */
  filter?: string | null;
}

/** Whether the change changes anything (else the operation only reads). */
export function isEmptyChange(c: SettingsChange): boolean {
  return Object.keys(c).length === 0;
}

function flag(raw: string): boolean | null {
  const v = raw.trim().toLowerCase();
  return v === "true" ? true : v === "false" ? false : null;
}

function numberIn(raw: string, b: { min: number; max: number; int: boolean }): number | null {
  const v = raw.trim();
  if (!/^\d+(\.\d+)?$/.test(v)) return null;
  const n = Number(v);
  if (b.int && !Number.isInteger(n)) return null;
  return n >= b.min && n <= b.max ? n : null;
}

/**
 * Reads a settings change from request parameters (`get` answers a parameter's value, undefined
 * when absent). A blank numeric value means "the deployment's again". Errors: SETTING_INVALID,
 * SETTING_CONFLICT (both secret actions at once), HEADERS_INVALID (`headers`; blank or `{}`: none),
 * BODY_MODE_INVALID (`bodyMode` not envelope or raw; blank: the envelope), FILTER_INVALID (`filter`; blank: none).
 */
export function parseSettingsChange(get: (name: string) => string | undefined): { change: SettingsChange } | { error: BrokerError } {
  const change: SettingsChange = {};
  const invalid = { error: BrokerError.of("SETTING_INVALID") };
  for (const name of NUMERIC) {
    const raw = get(name);
    if (raw === undefined) continue;
    if (raw.trim() === "") {
      change[name] = null;
      continue;
    }
    const n = numberIn(raw, SETTING_BOUNDS[name]);
    if (n === null) return invalid;
    change[name] = n;
  }
  for (const name of ["paused", "rotateSecret", "dropSecret"] as const) {
    const raw = get(name);
    if (raw === undefined) continue;
    const v = flag(raw);
    if (v === null) return invalid;
    if (name === "paused") change.paused = v;
    else if (name === "dropSecret") change.dropSecret = v || undefined;
    else if (v) change.rotateSecret = { graceMs: DEFAULT_SECRET_GRACE_MS };
  }
  const grace = get("secretGraceMs");
  if (grace !== undefined) {
    const g = numberIn(grace, { min: 0, max: MAX_SECRET_GRACE_MS, int: true });
    if (g === null) return invalid;
    if (change.rotateSecret) change.rotateSecret = { graceMs: g };
  }
  const alertUrl = get("alertUrl");
  if (alertUrl !== undefined) {
    const url = alertUrl.trim();
    if (url !== "" && !isAlertUrl(url)) return invalid;
    change.alertUrl = url === "" ? null : url;
  }
  const headers = get("headers");
  if (headers !== undefined) {
    if (headers.trim() === "") change.headers = null;
    else {
      const parsed = parseCustomHeaders(headers);
      if (parsed === null) return { error: BrokerError.of("HEADERS_INVALID") };
      change.headers = Object.keys(parsed).length === 0 ? null : JSON.stringify(parsed);
    }
  }
  const bodyMode = get("bodyMode");
  if (bodyMode !== undefined) {
    const v = bodyMode.trim().toLowerCase();
    if (v !== "" && v !== "raw" && v !== "envelope") return { error: BrokerError.of("BODY_MODE_INVALID") };
    change.bodyMode = v === "raw" ? "raw" : "envelope";
  }
  const filter = get("filter");
  if (filter !== undefined) {
    const parsed = filter.trim() === "" ? null : parseContentFilter(filter);
    if (parsed === null && filter.trim() !== "") return { error: BrokerError.of("FILTER_INVALID") };
    change.filter = parsed === null ? null : filterText(parsed);
  }
  if (change.dropSecret === undefined) delete change.dropSecret;
  if (change.rotateSecret && change.dropSecret) return { error: BrokerError.of("SETTING_CONFLICT") };
  return { change };
}

/**
 * The settings after a change at `now`, and the new secret when one was made (shown once, to the
 * caller of that change). `newSecret` makes a secret (`generateSigningSecret` with random bytes).
 * SETTING_CONFLICT when the retry delays would end with the first above the cap.
 */
export function applySettingsChange(
  current: SubscriptionSettings,
  change: SettingsChange,
  now: number,
  newSecret: () => string,
): { settings: SubscriptionSettings; secret: string | null } | { error: BrokerError } {
  const next: SubscriptionSettings = { ...current };
  for (const name of NUMERIC) if (change[name] !== undefined) next[name] = change[name];
  if (change.alertUrl !== undefined) next.alertUrl = change.alertUrl;
  if (change.headers !== undefined) next.headers = change.headers;
  if (change.bodyMode !== undefined) next.bodyMode = change.bodyMode;
  if (change.filter !== undefined) next.filter = change.filter;
  if (next.retryBaseMs !== null && next.retryMaxMs !== null && next.retryBaseMs > next.retryMaxMs)
    return { error: BrokerError.of("SETTING_CONFLICT") };
  if (change.paused !== undefined && change.paused !== current.paused) {
    next.paused = change.paused;
    next.pausedAt = change.paused ? now : null;
  }
  let secret: string | null = null;
  if (change.rotateSecret) {
    secret = newSecret();
    // Without a secret of its own, the deployment's keep signing through the grace period.
    next.previousSecret = current.secret;
    next.previousUntil = current.secret === null ? null : now + change.rotateSecret.graceMs;
    next.secret = secret;
  } else if (change.dropSecret) {
    next.secret = null;
    next.previousSecret = null;
    next.previousUntil = null;
  }
  return { settings: next, secret };
}

/** A secret in the Standard Webhooks form, from 32 random bytes (or any number of them). */
export function generateSigningSecret(random: Buffer): string {
  return `whsec_${random.toString("base64")}`;
}

/**
 * The secrets that sign a callback at `now`, newest first: the subscription's own, and the one
 * before the last rotation while its grace lasts. Null: none of its own, the deployment's sign.
 */
export function signingSecretsAt(
  s: Pick<SubscriptionSettings, "secret" | "previousSecret" | "previousUntil">,
  now: number,
): string[] | null {
  if (s.secret === null) return null;
  const keep = s.previousSecret !== null && s.previousUntil !== null && now < s.previousUntil;
  return keep ? [s.secret, s.previousSecret as string] : [s.secret];
}

/** The least time from the start of one callback to the start of the next (ms); 0 without a rate limit. */
export function callbackSpacingMs(maxRate: number | null): number {
  return maxRate === null ? 0 : Math.ceil(1000 / maxRate);
}

/** Whether the settings are the deployment's in every respect (nothing worth storing or recording). */
export function isDefaultSettings(s: SubscriptionSettings): boolean {
  return (Object.keys(DEFAULT_SETTINGS) as (keyof SubscriptionSettings)[]).every((k) => s[k] === DEFAULT_SETTINGS[k]);
}
