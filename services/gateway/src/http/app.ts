import { randomBytes } from "node:crypto";
import { STATUS_CODES } from "node:http";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import { BrokerError, type Logger, type Mount, NEUTRAL_SPELLING, type Spelling } from "@evb/domain";
import { CONSOLE_PATH, consoleRouter } from "../console/console-router.ts";
import { JSONRPC_PATH, jsonRpcEndpoint } from "../jsonrpc/jsonrpc-endpoint.ts";
import { type AccessControl, callerOf } from "./access-control.ts";
import { bodyFailureStatus } from "./body-guard.ts";
import type { Operation } from "./operation.ts";
import { genericCode, Params } from "./params.ts";
import { jsonBodyReader } from "./json-body.ts";
import { ParamCollector, ParamReadError, type RawParams } from "./param-collector.ts";
import { paramReader } from "./request-params.ts";
import { parseQueryString } from "./url-encoded.ts";
import { errorBody, type Reply, sendJson, sendJsonText, sendText, successBody, successJson } from "./replies.ts";

export interface AppOptions {
  mounts: readonly Mount[];
  operations: readonly Operation[];
  logger: Logger;
  /** Runs first on every request (request id, access log, metrics). */
  observe?: RequestHandler;
  /** Extra routes outside the mounts (health). */
  extra?: (app: express.Express) => void;
  /** Body size cap for form posts, bytes. */
  bodyLimitBytes: number;
  /** Proxies whose X-Forwarded-For is believed (express `trust proxy` entries). */
  trustedProxies: readonly string[];
  /** Optional IP allow-list, Basic authentication and API keys in front of every mount. */
  access?: AccessControl;
  /**
   * What guards the web console's files (no data: the page reads it through the mounts, under
   * `access`). Default `access`; main.ts passes the allow-list and Basic part alone, because a
   * browser cannot send an API key with a page load and the page asks for the key itself.
   */
  consoleAccess?: AccessControl;
  /**
   * Why the ledger must not be answered from now (LedgerGuard), or null. While it says why, every
   * operation answers its failure code with that reason instead of reading it.
   */
  ledgerRefusal?: () => string | null;
  /** BRAND's spelling: the class a JSON-RPC broker error names (`{context}/jsonrpc`). Default neutral. */
  spelling?: Spelling;
}

/** An operation refused because the ledger in Postgres is not the one this gateway served. */
class LedgerRefusedError extends Error {}

/** The framework's error timestamp: ISO-8601 in UTC with a "+0000" offset, e.g. 2024-05-14T09:30:00.000+0000. */
function frameworkTimestamp(): string {
  return new Date().toISOString().replace("Z", "+0000");
}

/** The framework's 404 JSON for `path`. */
function notFound(res: Response, path: string): void {
  sendJson(res, 404, { timestamp: frameworkTimestamp(), status: 404, error: "Not Found", message: "No message available", path });
}

function unknownPath(mount: Mount, req: Request, res: Response): void {
  const path = req.originalUrl.split("?")[0] ?? req.path;
  if (mount.variant === "L") {
    notFound(res, path);
  } else {
    sendJson(res, 200, { code: genericCode(mount.variant), message: `No handler found for ${req.method} ${path}` });
  }
}

/**
 * The HTTP front: every mounted variant under its context path, any HTTP method, parameters
 * from the query string and form body, and every reply an operation produces is HTTP 200 JSON
 * in the variant's shape. Nothing here throws to express: a failure that is not a BrokerError
 * answers the generic code, never a 5xx.
 */
export function buildApp(opts: AppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // Context paths are exact, like operation names: /EVENT-BROKER is not /event-broker.
  app.set("case sensitive routing", true);
  // Only these proxies' X-Forwarded-For names the caller (TRUSTED_PROXIES); anyone else's is
  // ignored, or a caller could claim an address on the allow-list.
  app.set("trust proxy", opts.trustedProxies);
  // Parameters are read by paramReader (linear, bounded) only once a request has reached an
  // operation; express's own query parser would run on any access to req.query.
  app.set("query parser", false);
  if (opts.observe) app.use(opts.observe);
  opts.extra?.(app);
  // The web console: same origin as the API and behind the same access settings. A variant
  // mounted at /console itself keeps the path.
  if (!opts.mounts.some((m) => m.path === CONSOLE_PATH || m.path.startsWith(`${CONSOLE_PATH}/`))) {
    const guard = opts.consoleAccess ?? opts.access;
    app.use(CONSOLE_PATH, ...(guard ? [guard.authenticate] : []), consoleRouter(opts.mounts));
  }

  const readParams = paramReader(opts.bodyLimitBytes);
  const readJson = jsonBodyReader(opts.bodyLimitBytes);
  const read: ParamsOf = async (op, req, res, variant) => {
    if (op.body !== "json") return new Params(await readParams(req, res), variant);
    // The query string only: the body, whatever its Content-Type (a form's too), is the JSON.
    const query = new ParamCollector();
    const q = req.originalUrl.indexOf("?");
    if (q >= 0) parseQueryString(req.originalUrl.slice(q + 1), query);
    const json = await readJson(req, res);
    return new Params(withBodyGroup(query.params, json), variant, undefined, json);
  };
  for (const mount of opts.mounts) app.use(mount.path, mountRouter(mount, opts, read));

  app.use((req, res) => notFound(res, req.path));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const ref = errorReference(res);
    opts.logger.warn({ err, path: req.path, errorRef: ref }, "request failed outside any mount");
    sendJson(res, 400, { status: 400, error: "Bad Request", message: `request could not be handled ${refText(ref)}`, path: req.path });
  });
  return app;
}

type ParamsOf = (op: Operation, req: Request, res: Response, variant: Mount["variant"]) => Promise<Params>;

/**
 * A JSON body's top-level `groupId` as the `groupId` parameter (over the query string's), so that
 * the key's group scope is checked against the group the operation acts on: a string as sent, an
 * integer as its digits (JSON has numbers, a form none), anything else as " ", a group no
 * operation accepts where one must be given (E: 100306) and group 1 where blank means 1.
 */
function withBodyGroup(raw: RawParams, json: unknown): RawParams {
  const g = typeof json === "object" && json !== null ? (json as { groupId?: unknown }).groupId : undefined;
  if (g === undefined || g === null) return raw;
  raw.set("groupId", [typeof g === "string" ? g : typeof g === "number" && Number.isSafeInteger(g) ? String(g) : " "]);
  return raw;
}

/**
 * One mounted variant: each request routed to the variant's operation by path (an unknown path
 * answers as such whatever its body, behaviour.md 1.4), its parameters read, then run.
 */
function mountRouter(mount: Mount, opts: AppOptions, readParams: ParamsOf): express.Router {
  const byPath = new Map<string, Operation>();
  for (const op of opts.operations) if (op.variants.includes(mount.variant)) byPath.set(op.path, op);
  const router = express.Router({ caseSensitive: true, strict: false });
  if (opts.access) router.use(opts.access.authenticate);
  const jsonRpc = jsonRpcEndpoint({
    variant: mount.variant,
    operations: byPath,
    invoke: (op, params, req, res) => invoke(op, params, mount, opts, req, res),
    ...(opts.access ? { access: opts.access } : {}),
    bodyLimitBytes: opts.bodyLimitBytes,
    spelling: opts.spelling ?? NEUTRAL_SPELLING,
    logger: opts.logger,
  });
  router.use(async (req, res) => {
    const path = operationPath(req);
    if (path === JSONRPC_PATH) return jsonRpc(req, res);
    // Route first: an unknown path answers as such whatever its body (behaviour.md 1.4).
    const op = byPath.get(path);
    if (!op) return unknownPath(mount, req, res);
    let params: Params;
    try {
      params = await readParams(op, req, res, mount.variant);
    } catch (err) {
      return answerParamFailure(err, mount, op, opts, res);
    }
    await runOperation(op, params, mount, opts, req, res);
  });
  return router;
}

/** Parameters that could not be read: HTTP's own answer when the body's framing or timing broke, else the variant's error (paramFailure). */
function answerParamFailure(err: unknown, mount: Mount, op: Operation, opts: AppOptions, res: Response): void {
  const status = err instanceof ParamReadError ? bodyFailureStatus(err) : undefined;
  if (status !== undefined) {
    // The connection's framing or timing failed, not the operation: HTTP's answer, then close.
    res.setHeader("Connection", "close");
    sendJson(res, status, { status, error: STATUS_CODES[status] ?? "Error", message: (err as Error).message });
    return;
  }
  sendJson(res, 200, errorBody(mount.variant, paramFailure(err, op, mount, opts.logger, errorReference(res))));
}

/** Runs `op` for a caller allowed to call it: its reply, or the BrokerError its failure answers (toBrokerError). */
async function invoke(op: Operation, params: Params, mount: Mount, opts: AppOptions, req: Request, res: Response): Promise<Reply> {
  try {
    const refused = opts.ledgerRefusal?.() ?? null;
    if (refused !== null) throw new LedgerRefusedError(`the ledger is not available: ${refused}`);
    const caller = callerOf(req);
    return await op.handle({ variant: mount.variant, params, req, remoteIp: caller.address, caller });
  } catch (err) {
    throw toBrokerError(err, mount, op, opts.logger, errorReference(res));
  }
}

/** Authorizes and runs `op`, and answers its reply (or its failure) in the variant's shape, always HTTP 200. */
async function runOperation(op: Operation, params: Params, mount: Mount, opts: AppOptions, req: Request, res: Response): Promise<void> {
  try {
    if (opts.access && !(await opts.access.authorize(req, res, op, params))) return;
    const reply = await invoke(op, params, mount, opts, req, res);
    if (reply.kind === "text") {
      sendText(res, 200, reply.text);
    } else if (reply.kind === "json") {
      sendJsonText(res, 200, successJson(mount.variant, op.kind, reply.json));
    } else if (reply.kind === "bare") {
      sendJson(res, 200, reply.body);
    } else {
      sendJson(res, 200, successBody(mount.variant, op.kind, reply.data));
    }
  } catch (err) {
    sendJson(res, 200, errorBody(mount.variant, toBrokerError(err, mount, op, opts.logger, errorReference(res))));
  }
}

/** The operation a request under a mount names. Like Spring's path matching, ";…" segment parameters (e.g. ;jsessionid=…) are ignored. */
function operationPath(req: Request): string {
  return req.path
    .replace(/;[^/]*/g, "")
    .replace(/^\/+/, "")
    .replace(/\/$/, "");
}

/**
 * Parameters that could not be read: the error the operation declares for why
 * (`paramFailures`; publish's, say, answers a body over the limit with its content rule's
 * 100201). Anything else is the generic code with what went wrong and how to fix it, as the
 * original's framework answered a request it could not bind.
 */
function paramFailure(err: unknown, op: Operation, mount: Mount, logger: Logger, ref: string): BrokerError {
  const path = op.path;
  if (!(err instanceof ParamReadError) || err.kind === "unreadable-body") {
    // The detail (a zlib or stream message) is for the log, not the caller.
    logger.warn({ err, path, errorRef: ref }, "request parameters could not be read");
    const unsupported = (err as { cause?: { type?: unknown } }).cause?.type === "encoding.unsupported";
    const what = unsupported
      ? "request body has a Content-Encoding this gateway does not read; send it uncompressed"
      : "request body could not be read";
    return new BrokerError(genericCode(mount.variant), `${what} ${refText(ref)}`);
  }
  const declared = op.paramFailures?.[err.kind];
  if (declared !== undefined) return BrokerError.of(declared);
  const fix = err.kind === "body-too-large" ? "; send less, or raise the gateway's limit" : "";
  return new BrokerError(genericCode(mount.variant), `${err.message}${fix}`);
}

/**
 * An unexpected failure (storage down, a bug): the documented code, and a message that names no
 * internal detail (a Postgres or Redis message would show hosts, ports and queries) but the
 * request id under which the gateway logged the detail.
 */
function toBrokerError(err: unknown, mount: Mount, op: Operation, logger: Logger, ref: string): BrokerError {
  if (err instanceof BrokerError) return err;
  // Said once by the guard when it began; the answer says it to each caller.
  if (err instanceof LedgerRefusedError) {
    const documented = op.failureCode?.(mount.variant, err);
    return new BrokerError(documented ? BrokerError.of(documented).code : genericCode(mount.variant), err.message);
  }
  logger.error({ err, op: op.path, variant: mount.variant, errorRef: ref }, "operation failed unexpectedly");
  const documented = op.failureCode?.(mount.variant, err);
  if (documented) return BrokerError.of(documented, { cause: err });
  return new BrokerError(genericCode(mount.variant), `service unavailable ${refText(ref)}`, { cause: err });
}

/**
 * What ties an answer to its log line: the request's id (X-Request-Id, set by the request
 * observer, which also puts it on every log line), or a short random id where there is none.
 */
function errorReference(res: Response): string {
  const id = res.getHeader("x-request-id");
  return typeof id === "string" ? id : randomBytes(6).toString("hex");
}

function refText(ref: string): string {
  return `(request id ${ref}; the gateway log has the detail)`;
}
