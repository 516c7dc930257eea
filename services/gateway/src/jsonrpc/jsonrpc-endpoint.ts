import { STATUS_CODES } from "node:http";
import type { Request, Response } from "express";
import { BrokerError, type Logger, type Spelling, type Variant } from "@evb/domain";
import type { AccessControl } from "../http/access-control.ts";
import { keyRecordOf } from "../http/access-control.ts";
import { bodyFailureStatus } from "../http/body-guard.ts";
import { LoopBudget } from "../http/loop-budget.ts";
import type { Operation } from "../http/operation.ts";
import { ParamCollector, ParamReadError } from "../http/param-collector.ts";
import { genericCode, Params } from "../http/params.ts";
import { type Reply, replyPayload, sendJson } from "../http/replies.ts";
import { bodyReader } from "../http/request-params.ts";
import { parseQueryString } from "../http/url-encoded.ts";
import { getRequestText, parseBody, type RpcCall, type RpcEntry, replyText } from "./jsonrpc-envelope.ts";
import { batchHttpStatus, brokerRpcError, httpStatusOf, type RpcError, rpcError } from "./jsonrpc-errors.ts";
import { resolveCall } from "./jsonrpc-methods.ts";

/** The path of the endpoint under every mount. */
export const JSONRPC_PATH = "jsonrpc";

/** The reply's type, as the original's library wrote it (its clients read the body whatever the type). */
const JSONRPC_CONTENT_TYPE = "application/json-rpc;charset=UTF-8";

/** Calls of one batch run at once, as many as requests of one connection do (request-scheduler.ts); the rest wait their turn. */
const CALLS_IN_FLIGHT = 8;

/**
 * The time calls of batches may start in one turn of the event loop, shared by every batch: as
 * the request scheduler starts requests, a batch's next call waits for the next turn once this
 * turn's slice is used, so fifty batches of a hundred calls do not start in one stretch.
 */
const CALL_STARTS = new LoopBudget();

export interface JsonRpcEndpointOptions {
  variant: Variant;
  /** The mount's operations by path (`rest/open` …): a method runs the one of its name. */
  operations: ReadonlyMap<string, Operation>;
  /**
   * Runs an operation whose caller may make the call, as an HTTP request to it would run: its
   * reply, or the BrokerError it answers (the ledger's refusal, a documented failure code, the
   * generic code with the request id).
   */
  invoke: (op: Operation, params: Params, req: Request, res: Response) => Promise<Reply>;
  access?: AccessControl;
  /** BODY_LIMIT_BYTES. */
  bodyLimitBytes: number;
  /** BRAND: the broker error's class name. */
  spelling: Spelling;
  logger: Logger;
}

type Outcome = { result: unknown } | { error: RpcError };

/**
 * JSON-RPC 2.0 at `{context}/jsonrpc` (docs/jsonrpc.md): POST with a JSON body (any
 * Content-Type), or GET with `method`, `id` and `params`; one request, a batch, or notifications.
 * Each call runs the REST operation of its method through `invoke`, after the same key checks.
 */
export function jsonRpcEndpoint(o: JsonRpcEndpointOptions): (req: Request, res: Response) => Promise<void> {
  const readBody = bodyReader(o.bodyLimitBytes);
  return async (req, res) => {
    let text: string;
    if (req.method === "POST") {
      try {
        text = (await readBody(req, res)).toString("utf8");
      } catch (err) {
        return answerBodyFailure(err, res, o.logger);
      }
    } else if (req.method === "GET") {
      const query = new ParamCollector();
      const q = req.originalUrl.indexOf("?");
      try {
        if (q >= 0) parseQueryString(req.originalUrl.slice(q + 1), query);
      } catch (err) {
        return answerBodyFailure(err, res, o.logger);
      }
      const built = getRequestText(query.params);
      // The original's library answered a GET naming no call with an empty 400.
      if (built === null) return send(res, 400, "");
      text = built;
    } else {
      res.setHeader("Allow", "GET, POST");
      sendJson(res, 405, { status: 405, error: "Method Not Allowed", message: `JSON-RPC is served over POST (or GET), not ${req.method}` });
      return;
    }
    const budget = new LoopBudget();
    const body = await parseBody(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, () => budget.maybePause());
    if ("fatal" in body) return send(res, httpStatusOf(body.fatal), replyText(null, { error: body.fatal }));
    if (!body.batch) {
      const outcome = await runEntry(o, body.entry, req, res);
      if (outcome === null) return send(res, 200, "");
      return send(res, httpStatusOf(errorOf(outcome.outcome)), replyText(outcome.id, outcome.outcome), retryAfter(outcome.outcome));
    }
    if (req.headers["idempotency-key"] !== undefined) {
      const error = rpcError("INVALID_REQUEST", "an Idempotency-Key header cannot name a batch; give each publish its idempotencyKey");
      return send(res, 400, replyText(null, { error }));
    }
    const outcomes = await inTurns(body.entries, (e) => runEntry(o, e, req, res));
    const answered = outcomes.filter((x): x is NonNullable<typeof x> => x !== null);
    // Only notifications: nothing to answer (JSON-RPC 2.0 section 6).
    if (answered.length === 0) return send(res, 200, "");
    const parts: string[] = [];
    for (const a of answered) {
      parts.push(replyText(a.id, a.outcome));
      await budget.maybePause();
    }
    send(res, batchHttpStatus(answered.map((a) => errorOf(a.outcome))), `[${parts.join(",")}]`);
  };
}

function errorOf(outcome: Outcome): RpcError | undefined {
  return "error" in outcome ? outcome.error : undefined;
}

/** A rate-limit refusal's Retry-After, in whole seconds. */
function retryAfter(outcome: Outcome): string | undefined {
  const ms = "error" in outcome ? (outcome.error.data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs : undefined;
  return typeof ms === "number" ? String(Math.max(1, Math.ceil(ms / 1000))) : undefined;
}

/** One entry's reply under its id, or null for a notification (which runs all the same). */
async function runEntry(
  o: JsonRpcEndpointOptions,
  entry: RpcEntry,
  req: Request,
  res: Response,
): Promise<{ id: RpcCall["id"]; outcome: Outcome } | null> {
  if (!entry.ok) return { id: entry.id, outcome: { error: entry.error } };
  const outcome = await runCall(o, entry.call, req, res);
  return entry.call.notification ? null : { id: entry.call.id, outcome };
}

/** A call: its method's operation, the key's checks for it (role, group, publish rate), then the operation. */
async function runCall(o: JsonRpcEndpointOptions, call: RpcCall, req: Request, res: Response): Promise<Outcome> {
  const resolved = resolveCall(call.method, call.params);
  if ("error" in resolved) return resolved;
  const op = o.operations.get(resolved.path);
  if (!op) return { error: rpcError("METHOD_NOT_FOUND", `${call.method} is not served by variant ${o.variant}`) };
  const params = new Params(resolved.raw, o.variant, resolved.extensions);
  try {
    if (o.access) {
      const groupId = op.groupIdParam === "first" ? params.first("groupId") : params.optional("groupId");
      const verdict = await o.access.checks.permits(keyRecordOf(req), op, groupId);
      if (verdict === "forbidden") return { error: rpcError("FORBIDDEN") };
      if (verdict !== "ok") return { error: rpcError("RATE_LIMITED", undefined, { retryAfterMs: verdict.retryAfterMs }) };
    }
    return { result: replyPayload(await o.invoke(op, params, req, res)) };
  } catch (err) {
    if (err instanceof BrokerError) return { error: brokerRpcError(err, o.spelling) };
    // Only the key checks throw anything else (the rate limiter's store): invoke answers BrokerErrors.
    o.logger.warn({ err, method: call.method }, "JSON-RPC call could not be checked");
    const unchecked = new BrokerError(genericCode(o.variant), "credentials could not be checked now; retry");
    return { error: brokerRpcError(unchecked, o.spelling) };
  }
}

/** `fn` over `items`, at most CALLS_IN_FLIGHT at once, each started in a slice of CALL_STARTS, results in the items' order. */
async function inTurns<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await CALL_STARTS.maybePause();
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CALLS_IN_FLIGHT, items.length) }, worker));
  return out;
}

/**
 * A body that could not be read: HTTP's own answer when its framing or timing broke (as for
 * every other path), else the JSON-RPC error (a body over BODY_LIMIT_BYTES or in too many
 * chunks is an invalid request; one that could not be read, a parse error).
 */
function answerBodyFailure(err: unknown, res: Response, logger: Logger): void {
  const status = err instanceof ParamReadError ? bodyFailureStatus(err) : undefined;
  if (status !== undefined) {
    res.setHeader("Connection", "close");
    sendJson(res, status, { status, error: STATUS_CODES[status] ?? "Error", message: (err as Error).message });
    return;
  }
  if (err instanceof ParamReadError && err.kind !== "unreadable-body") {
    const error = rpcError("INVALID_REQUEST", err.message);
    send(res, httpStatusOf(error), replyText(null, { error }));
    return;
  }
  logger.warn({ err }, "JSON-RPC body could not be read");
  const error = rpcError("PARSE_ERROR", "the request body could not be read; send it uncompressed or gzip-encoded");
  send(res, httpStatusOf(error), replyText(null, { error }));
}

function send(res: Response, status: number, text: string, retryAfterSeconds?: string): void {
  res.statusCode = status;
  if (retryAfterSeconds !== undefined) res.setHeader("Retry-After", retryAfterSeconds);
  if (text !== "") res.setHeader("Content-Type", JSONRPC_CONTENT_TYPE);
  res.setHeader("Content-Length", Buffer.byteLength(text, "utf8"));
  res.end(text, "utf8");
}
