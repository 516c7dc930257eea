import { randomBytes } from "node:crypto";
import {
  applySettingsChange,
  BrokerError,
  formatLocalTimestamp,
  generateSigningSecret,
  holdsNul,
  isBlank,
  isEmptyChange,
  parseSettingsChange,
  type SettingsChange,
  type SubscriptionSettings,
  shownHeaderNames,
} from "@evb/domain";
import type { SubscriptionRow } from "@evb/storage";
import { keyRecordOf } from "../http/access-control.ts";
import { ownerId } from "../http/caller-address.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import { storageFailure } from "../http/storage-failures.ts";
import { shownCallbackUrl } from "./shown-callback-url.ts";
import { type SubscriptionDeps, wake } from "./subscription-deps.ts";
import { parseCallbackUrl, resolveCallbackHost } from "@evb/subscriptions";

/**
 * The settings as every variant's admin shape shows them; null values are the deployment's. The
 * secret only when just made. The alert URL as `shown` gives it (shownCallbackUrl: whole to the
 * owning key only), as every other view of it: it may carry a user, password or token.
 */
function settingsRecord(id: string, s: SubscriptionSettings, secret: string | null, shown: (url: string) => string) {
  return {
    subscriptionId: id,
    paused: s.paused,
    pausedTimeStamp: s.pausedAt === null ? null : formatLocalTimestamp(s.pausedAt),
    maxRate: s.maxRate,
    retryMaxAttempts: s.retryMaxAttempts,
    retryBaseMs: s.retryBaseMs,
    retryMaxMs: s.retryMaxMs,
    deliveryWindow: s.deliveryWindow,
    signing: s.secret === null ? "deployment" : "own",
    previousSecretUntil: s.previousSecret === null ? null : s.previousUntil,
    alertUrl: s.alertUrl === null ? null : shown(s.alertUrl),
    // Names only, in every view: values are often a receiver's token.
    headers: shownHeaderNames(s.headers),
    bodyMode: s.bodyMode,
    filter: s.filter === null ? null : (JSON.parse(s.filter) as unknown[]),
    ...(secret === null ? {} : { secret }),
  };
}

/**
 * Whether the caller may see and change the subscription's settings: its owner (the owning API
 * key, or without keys the address that subscribed), or a key with the `admin` role. Not anyone,
 * as unSubscribe allows without keys: whoever rotates the secret learns it and could sign
 * callbacks the owner's receiver would take.
 */
export function mayConfigure(ctx: OperationContext, sub: SubscriptionRow): boolean {
  return sub.owner === ownerId(ctx.caller) || (keyRecordOf(ctx.req)?.roles.includes("admin") ?? false);
}

/**
 * An alert URL's host must resolve to addresses the callback policy allows (CALLBACK_ALLOWED_CIDRS),
 * as a callback URL's must: else 100502, as subscribe answers. The notifier checks again at each try.
 * The one check of an alert URL given to admin/subscriptionSettings or to subscribe.
 */
export async function checkAlertUrl(deps: Pick<SubscriptionDeps, "policy" | "lookup">, url: string): Promise<void> {
  const target = parseCallbackUrl(url);
  const resolved = target ? await resolveCallbackHost(target.host, deps.policy, deps.lookup) : null;
  if (!resolved?.ok) throw BrokerError.of("URL_CONNECT_FAILED");
}

/**
 * Applies a settings change to a subscription (subscribe's optional parameters too) and records
 * the subscription in Kafka, so that a rebuilt ledger keeps them; a resume wakes the notifiers.
 * Answers the settings and the secret made by a rotation (shown this once).
 */
export async function changeSettings(deps: SubscriptionDeps, id: string, change: SettingsChange) {
  const now = deps.now();
  const before: { paused?: boolean } = {};
  const out = await deps.settings.change(id, now, (current) => {
    before.paused = current.paused;
    const r = applySettingsChange(current, change, now, () => generateSigningSecret(randomBytes(32)));
    if ("error" in r) throw r.error;
    return r;
  });
  if (!out) throw new Error("settings change wrote nothing");
  await deps.recordSubscription(id);
  if (before.paused && !out.settings.paused) await wake(deps, [id]);
  // Never the secret itself: its existence only.
  deps.logger.info({ subscriptionId: id, changed: Object.keys(change), paused: out.settings.paused }, "subscription settings changed");
  return out;
}

/**
 * admin/subscriptionSettings?subscriptionId=ID[&maxRate=&retryMaxAttempts=&retryBaseMs=&retryMaxMs=
 * &deliveryWindow=&paused=&rotateSecret=&secretGraceMs=&dropSecret=&alertUrl=&headers=&bodyMode=&filter=] (an extension, every
 * variant's admin shape): without a setting it reads the subscription's settings, with any it
 * changes them (a blank value: the deployment's again) and answers them as they are then.
 * `rotateSecret=true` makes a new signing secret, answered in `secret` this once; the old one
 * signs too for `secretGraceMs` (default one day). `alertUrl` is where the notifiers send the
 * alerts to the owner (docs/delivery.md, "Alerts to the owner"); blank: none. `headers` (a JSON
 * object) are sent with every callback and answered by name only (docs/delivery.md, "Custom
 * headers"); blank: none. `bodyMode=raw` sends the published content as the body (docs/delivery.md,
 * "The raw body mode"); `filter` a content filter (docs/delivery.md, "Content filter"). Checks: id absent → missing parameter, blank
 * 100503; settings 100513 (bounds), 100514 (conflict), 100517 (headers), 100518 (bodyMode), 100519 (filter); an unknown id, or one the caller's key may
 * not configure, 100504.
 */
export function subscriptionSettingsOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "admin/subscriptionSettings",
    kind: "admin",
    variants: ["L", "M", "E"],
    // The owner's key changes its subscription's settings (or an admin key; the handler checks which).
    role: "subscribe",
    failureCode: storageFailure({}),
    async handle(ctx) {
      const raw = ctx.params.required("subscriptionId");
      if (isBlank(raw)) throw BrokerError.of("SUBSCRIPTION_ID_BLANK");
      const parsed = parseSettingsChange((name) => ctx.params.optional(name));
      if ("error" in parsed) throw parsed.error;
      const id = raw.toLowerCase();
      const sub = holdsNul(id) ? null : await deps.store.get(id);
      if (!sub || !mayConfigure(ctx, sub)) throw BrokerError.of("SUBSCRIPTION_ID_NOT_EXIST");
      const shown = (url: string) => shownCallbackUrl(url, sub.owner, ctx.caller);
      if (isEmptyChange(parsed.change)) return data(settingsRecord(id, await deps.settings.get(id), null, shown));
      if (parsed.change.alertUrl) await checkAlertUrl(deps, parsed.change.alertUrl);
      const out = await changeSettings(deps, id, parsed.change);
      return data(settingsRecord(id, out.settings, out.secret, shown));
    },
  };
}
