import {
  BrokerError,
  checkPattern,
  checkTopicName,
  isBlank,
  isEmptyChange,
  isPattern,
  type MatchRule,
  parseSettingsChange,
  type SettingsChange,
  TIMED_OUT,
  withTimeout,
} from "@evb/domain";
import type { SubscribeOutcome } from "@evb/storage";
import { type CallbackTarget, parseCallbackUrl, resolveCallbackHost } from "@evb/subscriptions";
import { ownerId } from "../http/caller-address.ts";
import { groupFromValue } from "../http/group.ts";
import type { Operation, OperationAccess, OperationContext } from "../http/operation.ts";
import { text } from "../http/replies.ts";
import { reachError, type ReachMode, reachMode } from "./callback-reach.ts";
import { checkConnectivity } from "./connectivity-check.ts";
import { changeSettings, checkAlertUrl } from "./settings-operation.ts";
import { publishStats, type SubscriptionDeps, wake } from "./subscription-deps.ts";

/**
 * The settings subscribe takes beside its own parameters; a signing secret is made by
 * admin/subscriptionSettings, whose answer shows it (subscribe answers the id only).
 */
const SUBSCRIBE_SETTINGS: ReadonlySet<string> = new Set([
  "maxRate",
  "retryMaxAttempts",
  "retryBaseMs",
  "retryMaxMs",
  "deliveryWindow",
  "paused",
  "alertUrl",
  "bodyMode",
  "filter",
]);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * subscribe (M and E) in the order of behaviour.md 8.1: parameters, URL format (100501),
 * connectivity (100502, also when the address is refused by the outbound policy), the group
 * (M: 200211; E: 100306 here and 200211 only before creating), subscriptionId format (100505),
 * topic or pattern (100103/100102/100106/100109), continuation of a live id (100108 or the
 * same id), then creation. The reply is the id as raw text. A continuation switches the callback
 * URL only when its owner asks (behaviour.md 10.4), and an ended id is resumed or taken again only
 * by its owner (the decision is decideSubscribe's). A caller already holding
 * MAX_SUBSCRIPTIONS_PER_CALLER live subscriptions gets 100510 for one more (not the original's:
 * it capped nothing). `verify` (not the original's; callback-reach.ts): absent, the check above;
 * `true` the same but 100515 for an address the policy refuses; `false` the policy only, so a
 * receiver down at that moment is accepted. Optional settings beside them (maxRate, retryMaxAttempts, retryBaseMs,
 * retryMaxMs, deliveryWindow, paused, alertUrl, bodyMode, filter; not the original's) are checked after the topic
 * (100513, 100514; an alert URL's host as admin/subscriptionSettings checks it, 100502) and set on
 * the subscription its owner took; absent, nothing changes.
 */
/** Who may subscribe: the `subscribe` role in the subscription's group; STOMP's and MQTT's SUBSCRIBE are checked against the same declaration. */
export const SUBSCRIBE_ACCESS = { role: "subscribe" } as const satisfies OperationAccess;

export function subscribeOperation(deps: SubscriptionDeps): Operation {
  return {
    path: "rest/subscribe",
    kind: "rest",
    variants: ["M", "E"],
    ...SUBSCRIBE_ACCESS,
    async handle(ctx) {
      const asked = await readSubscribe(ctx, deps);
      const { id, group, topic } = asked;
      if (asked.hasId) {
        const live = await deps.store.get(id);
        if (live?.active && (live.groupId !== group || live.topic !== topic)) throw mismatch(ctx);
      }
      if (ctx.variant === "E" && !deps.groups.has(group)) throw BrokerError.of("UNKNOWN_GROUP");
      const rule: MatchRule = ctx.variant === "E" ? "E" : "M";
      const owner = ownerId(ctx.caller);
      const out = await deps.store.subscribe(
        {
          id,
          groupId: group,
          topic,
          matchRule: rule,
          bodyVariant: rule,
          url: asked.url,
          nodeInstance: deps.selfAddress(),
          remoteIp: ctx.remoteIp,
          owner,
          now: deps.now(),
        },
        deps.maxPerCaller,
      );
      await settle(ctx, deps, asked, owner, out);
      return text(id);
    },
  };
}

/** A subscribe request whose parameters passed every check up to the continuation's. */
interface SubscribeAsked {
  topic: string;
  /** The callback URL, normalised, reachable when checked. */
  url: string;
  group: string;
  /** Canonical (lower-case) id: the one given, or a fresh one. */
  id: string;
  /** Whether the caller named the id (a continuation or a resume, perhaps). */
  hasId: boolean;
  /** The subscription's own settings asked for (empty: none). */
  change: SettingsChange;
}

/**
 * subscribe's checks up to the continuation, in the order of behaviour.md 8.1: parameters, URL
 * format (100501), connectivity (100502), the group's form (M: 200211, E: 100306), the id's
 * format (100505), topic or pattern, then the optional settings (100513, 100514, 100502).
 */
async function readSubscribe(ctx: OperationContext, deps: SubscriptionDeps): Promise<SubscribeAsked> {
  const topic = ctx.params.required("topic");
  const rawUrl = ctx.params.required("url");
  const rawGroup = ctx.params.optional("groupId");
  const target = parseCallbackUrl(rawUrl);
  if (!target) throw BrokerError.of("URL_INVALID");
  await checkReach(target, reachMode(ctx.params.optional("verify")), deps);
  // M checks the group here; E only checks the form here and whether it exists just before creating.
  const group = ctx.variant === "M" ? groupFromValue("M", rawGroup, deps.groups) : eGroupForm(rawGroup);
  const givenId = ctx.params.optional("subscriptionId") ?? "";
  const hasId = !isBlank(givenId);
  // Java's UUID parse does not trim: a padded id is not a UUID (100505).
  if (hasId && !UUID.test(givenId)) throw BrokerError.of("SUBSCRIPTION_ID_FORMAT");
  const bad = isPattern(topic) ? checkPattern(topic) : checkTopicName(topic);
  if (bad) throw bad;
  const change = await subscribeSettings((name) => ctx.params.optional(name), deps);
  // Ids are kept in canonical (lower-case) form, as a parsed Java UUID prints itself.
  const id = hasId ? givenId.toLowerCase() : crypto.randomUUID();
  return { topic, url: target.url.href, group, id, hasId, change };
}

/**
 * Step 5: the callback's connectivity (the TCP connection, and the TLS handshake for https), or
 * with `verify=false` only the address policy (a host that does not resolve now is taken too: the
 * notifier resolves and checks it again at each try). The error, if any, is reachError's.
 */
async function checkReach(target: CallbackTarget, mode: ReachMode, deps: SubscriptionDeps): Promise<void> {
  const timeoutMs = deps.connectTimeoutMs;
  const found =
    mode === "policy-only"
      ? await resolvedWithin(target.host, deps, timeoutMs)
      : await checkConnectivity(target, { policy: deps.policy, timeoutMs, lookup: deps.lookup });
  if (found.ok) return;
  const err = reachError(mode, found.refused ? "refused" : "unreachable");
  const url = target.url.origin;
  if (err) {
    deps.logger.info({ url, reason: found.reason, refused: found.refused }, "subscribe refused: callback not reachable");
    throw err;
  }
  deps.logger.info({ url, reason: found.reason }, "subscribe with verify=false: callback not reachable now, taken");
}

/** The host resolved against the policy within the connect timeout (a name server that does not answer is "unreachable now"). */
async function resolvedWithin(host: string, deps: SubscriptionDeps, timeoutMs: number) {
  const r = await withTimeout(resolveCallbackHost(host, deps.policy, deps.lookup), timeoutMs);
  return r === TIMED_OUT ? { ok: false as const, refused: false, reason: `resolving ${host} timed out` } : r;
}

/**
 * Not the original's: the subscription's own settings among subscribe's parameters, optional
 * (absent: the deployment's). Parsed as admin/subscriptionSettings parses them (100513, 100514),
 * other settings' parameters ignored; an alert URL (blank: none) checked by the same function as
 * there (its host must be one the callback policy allows, else 100502).
 */
export async function subscribeSettings(
  param: (name: string) => string | undefined,
  deps: Pick<SubscriptionDeps, "policy" | "lookup">,
): Promise<SettingsChange> {
  const settings = parseSettingsChange((name) => (SUBSCRIBE_SETTINGS.has(name) ? param(name) : undefined));
  if ("error" in settings) throw settings.error;
  if (settings.change.alertUrl) await checkAlertUrl(deps, settings.change.alertUrl);
  return settings.change;
}

/**
 * What follows the store's decision: a refusal thrown, a continuation or ended id of another
 * owner only logged (the reply is the id either way), and a subscription taken made durable in
 * Kafka, its settings set, its counters published and its dispatch woken.
 */
async function settle(
  ctx: OperationContext,
  deps: SubscriptionDeps,
  asked: SubscribeAsked,
  owner: string,
  out: SubscribeOutcome,
): Promise<void> {
  const { id, topic, group } = asked;
  if (out.kind === "over-limit") {
    deps.logger.warn({ owner, live: out.live, limit: deps.maxPerCaller }, "subscribe refused: MAX_SUBSCRIPTIONS_PER_CALLER reached");
    throw BrokerError.of("SUBSCRIPTION_LIMIT");
  }
  if (out.kind === "mismatch") throw mismatch(ctx);
  if (out.kind === "kept") {
    // Answered as the original did (the same id), but the events keep going to the owner's URL.
    deps.logger.warn(
      { subscriptionId: id, owner: out.row.owner, by: owner },
      "continuation by a caller other than the owner: callback URL kept",
    );
    return;
  }
  if (out.kind === "declined") {
    // The reply is always the id (behaviour.md 8.2), but an ended id stays its owner's: no
    // takeover, no resume position, no callbacks for this caller (docs/security.md).
    deps.logger.warn(
      { subscriptionId: id, owner: out.row.owner, by: owner },
      "subscribe with an ended id by a caller other than its owner: nothing taken",
    );
    return;
  }
  // The id is the caller's promise that the subscription survives a lost ledger: in Kafka first.
  if (isEmptyChange(asked.change)) await deps.recordSubscription(id);
  else await changeSettings(deps, id, asked.change);
  await publishStats(deps, out.row);
  if (out.kind !== "created") await wake(deps, [id]);
  deps.logger.info({ subscriptionId: id, topic, group, outcome: out.kind, catchingUp: out.row.catchingUp }, "subscription taken");
}

/** E: blank → "1"; anything but an integer → 100306. Existence is checked later (step 11). */
function eGroupForm(raw: string | undefined): string {
  if (raw === undefined || isBlank(raw)) return "1";
  return groupFromValue("E", raw, new Set([raw]));
}

function mismatch(ctx: OperationContext): BrokerError {
  return BrokerError.of(ctx.variant === "E" ? "TOPIC_MISMATCH_E" : "TOPIC_MISMATCH_M");
}
