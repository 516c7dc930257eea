import { z } from "zod";
import { NEUTRAL_SPELLING, type Spelling } from "./spelling.ts";
import type { MatchRule } from "./topic-pattern.ts";
import type { Variant } from "./variant.ts";

/**
 * The wire Event (interface.md "Event", behaviour.md 7.5 and 8.4): the one place that shapes
 * getEvent's reply and a callback's `event`, and the schemas the OpenAPI document shows for both.
 * `evb-client` depends on nothing of ours, so its `BrokerEvent` and `CallbackBody` are copies,
 * held equal to these types by `test/client/wire-types.test.ts` (tsc fails on a difference).
 */

const base64 = z
  .string()
  .regex(/^[A-Za-z0-9+/]*={0,2}$/)
  .describe("Standard Base64 of the content's UTF-8 bytes");
const eventId = z.string().describe("`<first 8 hex of sha256(topic)>-<sequence>-<block>`");

const eventE = () => z.object({ topic: z.string(), content: base64, eventId });
const eventWithExtensions = (description: string) =>
  z.object({ topic: z.string(), content: base64, extensions: z.record(z.string(), z.string()).describe(description), eventId });

/** The Event of getEvent and of callbacks: E has no extensions; L adds `event-plus`, a JSON string. */
export function wireEventSchema(v: Variant): WireEventSchema {
  if (v === "E") return eventE();
  return eventWithExtensions(
    v === "L"
      ? 'The `event-*` parameters given to publish, plus `event-plus`: a JSON string `{"timestamp","height","txHash","sender"}`.'
      : "The `event-*` parameters given to publish.",
  );
}

/** The body POSTed to a callback URL; subscriptions taken through E get E's Event shape. */
export function callbackBodySchema(v: MatchRule) {
  return z.object({ subscriptionId: z.uuid(), event: wireEventSchema(v) });
}

type WireEventSchema = ReturnType<typeof eventE> | ReturnType<typeof eventWithExtensions>;
/** An Event as it travels, in any variant (E's has no `extensions`). */
export type WireEvent = z.output<WireEventSchema>;
/** A callback's body as it travels. */
export type CallbackBody = z.output<ReturnType<typeof callbackBodySchema>>;

/** What every variant's Event is built from: a sealed event as the ledger keeps it. */
export interface EventSource {
  topic: string;
  content: Buffer;
  /** Under the names they were published with. */
  extensions: Readonly<Record<string, string>>;
  eventId: string;
}

/** What variant L's `event-plus` tells besides: the event's block, seal time, transaction and sender. */
export interface EventChainFields {
  height: number;
  /** Epoch milliseconds of the block's seal. */
  timestampMs: number;
  txHash: string;
  sender: string;
}

/** The value of the broker-added `event-plus` (getEvent in L, STOMP MESSAGE): a JSON string `{timestamp, height, txHash, sender}`. */
export function eventPlus(ev: EventChainFields): string {
  return JSON.stringify({ timestamp: ev.timestampMs, height: ev.height, txHash: ev.txHash, sender: ev.sender });
}

/**
 * The wire Event of `variant`, keys in the original's order `{topic, content (Base64),
 * extensions, eventId}`: E has no `extensions` key; M shows the stored extensions in `spelling`;
 * L adds the plus key (`event-plus`, `weevent-plus` under BRAND=weevent) as a JSON string
 * `{timestamp, height, txHash, sender}`, overwriting a client's value where it stood. Callbacks
 * pass no spelling (BRAND does not change them, protocols.md) and never L. Pure.
 */
export function wireEvent(ev: EventSource & EventChainFields, variant: Variant, spelling?: Spelling): WireEvent;
export function wireEvent(ev: EventSource, variant: MatchRule, spelling?: Spelling): WireEvent;
export function wireEvent(ev: EventSource & Partial<EventChainFields>, variant: Variant, spelling: Spelling = NEUTRAL_SPELLING): WireEvent {
  const content = ev.content.toString("base64");
  if (variant === "E") return { topic: ev.topic, content, eventId: ev.eventId };
  const extensions: Record<string, string> = { ...spelling.shown(ev.extensions) };
  // The overloads let only a source with the chain fields ask for L.
  if (variant === "L") extensions[spelling.plusKey] = eventPlus(ev as EventChainFields);
  return { topic: ev.topic, content, extensions, eventId: ev.eventId };
}

/**
 * The callback body (behaviour.md 8.4), keys in the original's order:
 * `{"subscriptionId","event":{…}}`, the event as `wireEvent` shapes it for the subscription's
 * variant, extensions as stored.
 */
export function callbackBody(subscriptionId: string, ev: EventSource, variant: MatchRule): string {
  const body: CallbackBody = { subscriptionId, event: wireEvent(ev, variant) };
  return JSON.stringify(body);
}
