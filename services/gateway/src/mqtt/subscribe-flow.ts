import { setImmediate as nextTurn } from "node:timers/promises";
import type { ISubscribePacket, ISubscription, IUnsubscribePacket } from "mqtt-packet";
import type { Logger } from "@evb/domain";
import { AFTER_BLOCK, type ApiKeyRecord } from "@evb/storage";
import type { TopicCatalog } from "../events/publish-operation.ts";
import type { CallerChecks } from "../http/access-control.ts";
import { SUBSCRIBE_ACCESS } from "../subscriptions/subscribe-operation.ts";
import type { LedgerFeed } from "../stomp/ledger-subscription.ts";
import type { MqttSubscription } from "./mqtt-subscription.ts";
import type { MqttSubscriptions } from "./mqtt-subscriptions.ts";
import { Reason, type Refusal } from "./mqtt-replies.ts";
import { checkFilter, isWildcardFilter } from "./topic-filter.ts";

export interface SubscribeContext {
  topics: TopicCatalog;
  ledger: LedgerFeed;
  checks: CallerChecks;
  /** MAX_SUBSCRIPTIONS_PER_CALLER: filters one connection may hold. */
  maxSubscriptions: number;
  subs: MqttSubscriptions;
  group: string;
  key: ApiKeyRecord | null;
  logger: Logger;
}

/** Filters of one SUBSCRIBE taken per turn of the event loop: a packet of thousands never holds it. */
const FILTERS_PER_TURN = 100;

/** What a SUBSCRIBE granted: one code per filter in order, and the subscriptions to start once the SUBACK is out. */
export interface Granted {
  codes: number[];
  started: MqttSubscription[];
}

/**
 * A SUBSCRIBE or UNSUBSCRIBE without a single topic filter, which both protocol levels call a
 * protocol violation (MQTT-3.8.3-3, MQTT-3.10.3-2; 3.1.1 the same numbers): the connection is
 * closed, MQTT 5 after DISCONNECT 0x82. null: the packet has filters. (mqtt-packet decodes such a
 * packet as an empty list; answered, its SUBACK could not even be encoded.)
 */
export function emptyFilterList(p: ISubscribePacket | IUnsubscribePacket): Refusal | null {
  const count = p.cmd === "subscribe" ? p.subscriptions.length : p.unsubscriptions.length;
  if (count > 0) return null;
  const [packet, rule] = p.cmd === "subscribe" ? ["SUBSCRIBE", "MQTT-3.8.3-3"] : ["UNSUBSCRIBE", "MQTT-3.10.3-2"];
  return { reason: Reason.PROTOCOL_ERROR, message: `an ${packet} with no topic filter (${rule})` };
}

/** What a shared subscription's filter starts with (MQTT 5 4.8.2): the broker has none (CONNACK says so). */
const SHARED_PREFIX = "$share/";

/**
 * A SUBSCRIBE's filters, each on its own (protocols.md 3.5): QoS 2 is granted as 1 (the broker's
 * maximum); a shared subscription (`$share/…`) is 0x9E, as CONNACK's sharedSubscriptionAvailable
 * false says (3.1.1: 0x80); a malformed filter or a name no topic has is 0x8F (3.1.1: 0x80); past
 * MAX_SUBSCRIPTIONS_PER_CALLER (or the caller's quota over all its connections) 0x97; a key
 * without `rest/subscribe` in the group 0x87. A new filter starts after the chain's head, read
 * once per SUBSCRIBE (only new events); one the session holds keeps its place and takes the new QoS.
 */
export async function subscribeFilters(filters: readonly ISubscription[], ctx: SubscribeContext): Promise<Granted> {
  const codes: number[] = [];
  const started: MqttSubscription[] = [];
  // Read once for the packet: one query (not one per filter), and its filters start together.
  let head: number | undefined;
  for (const [i, s] of filters.entries()) {
    if (i > 0 && i % FILTERS_PER_TURN === 0) await nextTurn();
    const qos: 0 | 1 = s.qos >= 1 ? 1 : 0;
    try {
      const refused = await refusal(s.topic, ctx);
      if (refused !== null) {
        codes.push(refused);
        continue;
      }
      if (head === undefined && !ctx.subs.has(s.topic)) head = await ctx.ledger.head(ctx.group);
      const after = ctx.subs.has(s.topic) ? 0 : (head as number);
      const sub = ctx.subs.add(s.topic, qos, ctx.group, { height: after, idx: AFTER_BLOCK });
      if (sub) started.push(sub);
      codes.push(sub ? qos : Reason.QUOTA_EXCEEDED);
    } catch (err) {
      ctx.logger.warn({ err, filter: s.topic }, "MQTT SUBSCRIBE failed on the ledger");
      codes.push(Reason.UNSPECIFIED);
    }
  }
  return { codes, started };
}

/** Why a filter is refused, or null. */
async function refusal(filter: string, ctx: SubscribeContext): Promise<number | null> {
  if (filter.startsWith(SHARED_PREFIX)) return Reason.SHARED_SUBSCRIPTIONS_NOT_SUPPORTED;
  if (checkFilter(filter) !== null) return Reason.TOPIC_FILTER_INVALID;
  if (ctx.subs.has(filter)) return null;
  if (ctx.subs.size >= ctx.maxSubscriptions) return Reason.QUOTA_EXCEEDED;
  if ((await ctx.checks.permits(ctx.key, SUBSCRIBE_ACCESS, ctx.group)) !== "ok") return Reason.NOT_AUTHORIZED;
  if (!isWildcardFilter(filter) && !(await ctx.topics.exists(ctx.group, filter))) return Reason.TOPIC_FILTER_INVALID;
  return null;
}
