import { type BrokerError, eventPlus, NEUTRAL_SPELLING, type Spelling } from "@evb/domain";
import type { FeedEvent } from "@evb/storage";
import { encodeFrame } from "./stomp-frame.ts";

/**
 * The frames the broker writes, with headers in the order the original wrote them (protocols.md
 * 2.3–2.9). Pure: each returns a text message's text.
 */

/** The version of a CONNECT that names none the broker speaks, and of a failed CONNECT's ERROR, as the original wrote it (protocols.md 2.1). */
const STOMP_VERSION = "1.1";
const LOGIN_FAILED = "login or password is wrong";
export const NOT_SUPPORTED = "NOT SUPPORT COMMAND";
/** Not the original's (it kept no CONNECT state): with access control on, a frame before a successful CONNECT. */
export const LOGIN_REQUIRED = "not logged in: CONNECT with login and passcode first";
/** A CONNECT with another identity's credentials on a session already logged in (the session keeps its own). */
export const ANOTHER_IDENTITY = "this session is logged in as another identity: open a new connection to log in as this one";
const CONTENT_TYPE = "text/plain;charset=UTF-8";

export function connected(heartBeat: string, version: string): string {
  return encodeFrame("CONNECTED", [
    ["heart-beat", heartBeat],
    ["version", version],
  ]);
}

/** CONNECT with wrong credentials: no receipt-id and no code, so the Java client ignores it and times out (2.8). */
export function loginFailed(): string {
  return encodeFrame("ERROR", [
    ["message", LOGIN_FAILED],
    ["version", STOMP_VERSION],
  ]);
}

/** A RECEIPT; `receiptId` undefined leaves the header out (SEND without `receipt`, DISCONNECT without one). */
export function receipt(headers: ReadonlyArray<readonly [string, string]>, receiptId: string | undefined): string {
  return encodeFrame("RECEIPT", receiptId === undefined ? headers : [...headers, ["receipt-id", receiptId]]);
}

/** A broker error as ERROR `message`, `code`, `receipt-id`, `content-length:0`. */
export function brokerError(err: BrokerError, receiptId: string | undefined): string {
  return errorFrame(err.wireMessage ?? err.message, String(err.code), receiptId);
}

/** An ERROR; `code` or `receiptId` undefined leaves that header out. */
export function errorFrame(message: string | undefined, code: string | undefined, receiptId: string | undefined): string {
  const headers: [string, string][] = [];
  if (message !== undefined) headers.push(["message", message]);
  if (code !== undefined) headers.push(["code", code]);
  if (receiptId !== undefined) headers.push(["receipt-id", receiptId]);
  headers.push(["content-length", "0"]);
  return encodeFrame("ERROR", headers);
}

/** A SEND the storage did not confirm: the Lombok rendering of the SendResult, no code (2.4). */
export function sendNotConfirmed(status: "TIMEOUT" | "ERROR", topic: string, receiptId: string | undefined): string {
  return errorFrame(`SendResult(status=${status}, topic=${topic}, eventId=null)`, undefined, receiptId);
}

/** What a MESSAGE names besides the event: the SUBSCRIBE `id` and the broker's subscription id. */
export interface Delivery {
  handle: string;
  subscriptionId: string;
}

/**
 * One event as a MESSAGE (protocols.md 2.6): every stored extension as a header, as the spelling
 * shows it, the broker-added plus header (a JSON string, overwriting any client value: `event-plus`,
 * or `weevent-plus` only under BRAND=weevent, as getEvent's; Spelling.plusKey),
 * the eventId, and the raw content as the body with its byte length.
 */
export function messageFrame(to: Delivery, event: FeedEvent, spelling: Spelling = NEUTRAL_SPELLING): string {
  const body = event.content.toString("utf8");
  const headers: [string, string][] = [
    ["subscription", to.handle],
    ["subscription-id", to.subscriptionId],
    ["message-id", to.handle],
    ["destination", event.topic],
    ["content-type", CONTENT_TYPE],
  ];
  for (const [k, v] of Object.entries(spelling.shown(event.extensions))) {
    if (k !== spelling.plusKey) headers.push([k, v]);
  }
  headers.push([spelling.plusKey, eventPlus(event)]);
  headers.push(["eventId", event.eventId], ["content-length", String(event.content.length)]);
  return encodeFrame("MESSAGE", headers, body);
}
