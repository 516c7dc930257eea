import { MAX_CALL_CHARS, scanJson } from "./json-scan.ts";
import { type RpcError, rpcError } from "./jsonrpc-errors.ts";

export type RpcId = string | number | null;

/** One well-formed call: a request (answered under its id) or a notification (`id` absent or null: never answered). */
export interface RpcCall {
  id: RpcId;
  notification: boolean;
  method: string;
  /** As sent: an array, an object, or undefined when absent or null. */
  params: unknown;
}

/** One element of a body: a call to run, or the invalid request's error (answered even without an id). */
export type RpcEntry = { ok: true; call: RpcCall } | { ok: false; id: RpcId; error: RpcError };

/** A whole body: one request or a batch of them, or an error that answers the body as a whole. */
export type RpcBody = { batch: false; entry: RpcEntry } | { batch: true; entries: RpcEntry[] } | { fatal: RpcError };

/**
 * The calls of a JSON-RPC body (JSON-RPC 2.0, with the original server's leniency: `jsonrpc` may
 * be absent). Refused as a whole: text that is not JSON (-32700), nesting deeper than
 * MAX_JSON_DEPTH, a batch of more than MAX_BATCH_CALLS, an empty batch, a call longer than
 * MAX_CALL_CHARS (-32600). A batch is parsed call by call, `maybePause` awaited between them.
 */
export async function parseBody(text: string, maybePause: () => Promise<void> = async () => {}): Promise<RpcBody> {
  const scan = await scanJson(text, maybePause);
  if (scan.kind === "malformed") return { fatal: rpcError("PARSE_ERROR") };
  if (scan.kind === "too-deep") return { fatal: rpcError("INVALID_REQUEST", "JSON nested deeper than 32 levels") };
  if (scan.kind === "too-many-calls")
    return { fatal: rpcError("INVALID_REQUEST", "a batch of more than 100 calls; send at most 100 per request") };
  if (scan.kind === "single") {
    if (text.length > MAX_CALL_CHARS) return { fatal: rpcError("INVALID_REQUEST", "a request larger than 1048576 characters; send less") };
    const value = parseJson(text);
    return value.ok ? { batch: false, entry: toEntry(value.value) } : { fatal: rpcError("PARSE_ERROR") };
  }
  if (scan.calls.length === 0) return { fatal: rpcError("INVALID_REQUEST", "an empty batch; send at least one call") };
  const values: unknown[] = [];
  for (const [start, end] of scan.calls) {
    if (end - start > MAX_CALL_CHARS) return { fatal: rpcError("INVALID_REQUEST", "a call larger than 1048576 characters; send less") };
    const value = parseJson(text.slice(start, end));
    if (!value.ok) return { fatal: rpcError("PARSE_ERROR") };
    values.push(value.value);
    await maybePause();
  }
  return { batch: true, entries: values.map(toEntry) };
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** A JSON value as a call, or the invalid request it is (with its id when that much was readable). */
export function toEntry(value: unknown): RpcEntry {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return invalid(null, "a call is a JSON object");
  const o = value as Record<string, unknown>;
  const hasId = Object.hasOwn(o, "id");
  const id = hasId ? o.id : null;
  if (!(id === null || typeof id === "string" || typeof id === "number")) return invalid(null, "id is a string, a number or null");
  // A number a double cannot hold exactly (1e400, 2^53 and beyond) would be echoed as another one.
  if (typeof id === "number" && (!Number.isFinite(id) || (Number.isInteger(id) && !Number.isSafeInteger(id)))) {
    return invalid(null, "id is a number that cannot be echoed exactly; send a string or an integer below 2^53");
  }
  if (Object.hasOwn(o, "jsonrpc") && o.jsonrpc !== "2.0") return invalid(id, 'jsonrpc is "2.0" (or absent)');
  if (typeof o.method !== "string") return invalid(id, "method is a string");
  const params = o.params;
  if (params !== undefined && params !== null && typeof params !== "object") return invalid(id, "params is an array or an object");
  return {
    ok: true,
    call: { id, notification: !hasId || id === null, method: o.method, params: params === null ? undefined : params },
  };
}

function invalid(id: RpcId, detail: string): RpcEntry {
  return { ok: false, id, error: rpcError("INVALID_REQUEST", detail) };
}

/**
 * The call a GET names (`?method=…&id=…&params=…`, as the original's library read it): `params`
 * is JSON (starting with `[` or `{`) or the Base64 of it, `[]` when absent; an `id` that is an
 * integer of up to 15 digits is a number, any other a string, none (or empty) a notification. The
 * text is parsed as a POST body is. Null when none of the three is given.
 */
export function getRequestText(query: ReadonlyMap<string, readonly string[]>): string | null {
  const method = query.get("method")?.[0];
  const id = query.get("id")?.[0];
  const params = query.get("params")?.[0];
  if (method === undefined && id === undefined && params === undefined) return null;
  let paramsText = "[]";
  if (params !== undefined && params !== "") {
    paramsText = /^\s*[[{]/.test(params) ? params : Buffer.from(params, "base64").toString("utf8");
  }
  const idText = id === undefined || id === "" ? "null" : /^-?(0|[1-9]\d{0,14})$/.test(id) ? id : JSON.stringify(id);
  return `{"jsonrpc":"2.0","id":${idText},"method":${method === undefined ? "null" : JSON.stringify(method)},"params":${paramsText}}`;
}

/** A reply's text, members in the original's order: jsonrpc, id, then result or error. */
export function replyText(id: RpcId, outcome: { result: unknown } | { error: RpcError }): string {
  const tail = "error" in outcome ? `"error":${JSON.stringify(outcome.error)}` : `"result":${JSON.stringify(outcome.result ?? null)}`;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${tail}}`;
}
