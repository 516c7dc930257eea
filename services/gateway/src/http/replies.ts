import type { ServerResponse } from "node:http";
import type { BrokerError, Variant } from "@evb/domain";

/**
 * What an operation answers. `data` goes into the variant's envelope where the variant has one
 * for that kind of operation; `bare` is sent as is in every variant (publish's SendResult);
 * `text` is raw unquoted text (subscribe's id).
 */
export type Reply =
  | { kind: "data"; data: unknown }
  | { kind: "bare"; body: unknown }
  | { kind: "text"; text: string }
  /** `data` already serialized (a large listing built in slices of the event loop). */
  | { kind: "json"; json: string };

export const data = (d: unknown): Reply => ({ kind: "data", data: d });
export const bare = (body: unknown): Reply => ({ kind: "bare", body });
export const text = (t: string): Reply => ({ kind: "text", text: t });

/** The payload a reply carries, as a client unwraps it (admin/batch's calls, JSON-RPC's results). */
export function replyPayload(reply: Reply): unknown {
  if (reply.kind === "data") return reply.data;
  if (reply.kind === "bare") return reply.body;
  if (reply.kind === "text") return reply.text;
  return JSON.parse(reply.json);
}

export type OperationKind = "rest" | "admin";

/** Whether success data is wrapped in `{code, message, data}` (behaviour.md 2.1). */
function envelopes(variant: Variant, kind: OperationKind): boolean {
  return variant === "L" || (variant === "M" && kind === "admin");
}

/** successBody's text, around data that is already JSON. */
export function successJson(variant: Variant, kind: OperationKind, json: string): string {
  return envelopes(variant, kind) ? `{"code":0,"message":"success","data":${json}}` : json;
}

export function successBody(variant: Variant, kind: OperationKind, d: unknown): unknown {
  return envelopes(variant, kind) ? { code: 0, message: "success", data: d } : d;
}

/** The broker-exception object: `{code, message, data: null}` in L, `{code, message}` in M and E. */
export function errorBody(variant: Variant, err: BrokerError): unknown {
  return variant === "L" ? { code: err.code, message: err.wireMessage, data: null } : { code: err.code, message: err.wireMessage };
}

/** The original's exact JSON header (behaviour.md 1.3), byte for byte: no space, upper-case UTF-8. */
export const JSON_CONTENT_TYPE = "application/json;charset=UTF-8";

/**
 * The raw text reply of `subscribe` (the id, unquoted), as the original's string converter wrote
 * it: `text/plain` with its UTF-8 charset, in the same spelling as the JSON header.
 */
export function sendText(res: ServerResponse, status: number, text: string): void {
  send(res, status, "text/plain;charset=UTF-8", text);
}

/** Writes text that is JSON already, with JSON_CONTENT_TYPE. */
export function sendJsonText(res: ServerResponse, status: number, json: string): void {
  send(res, status, JSON_CONTENT_TYPE, json);
}

/** Writes `body` as JSON with JSON_CONTENT_TYPE (express's `res.json` would write `application/json; charset=utf-8`). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  // JSON.stringify(undefined) is undefined: an empty body, as express would send.
  send(res, status, JSON_CONTENT_TYPE, JSON.stringify(body) ?? "");
}

function send(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.statusCode = status;
  res.setHeader("Content-Type", contentType);
  res.setHeader("Content-Length", Buffer.byteLength(text, "utf8"));
  // A string, not a Buffer: Node then sends head and body in one write, with no copy of the body.
  res.end(text, "utf8");
}
