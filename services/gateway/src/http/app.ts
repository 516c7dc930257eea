import { parse } from "node:querystring";
import express, { type NextFunction, type Request, type Response } from "express";
import { BrokerError, type Logger, type Mount } from "@evb/domain";
import { CONSOLE_PATH, consoleRouter } from "../console/console-router.ts";
import { type AccessControlOptions, accessControl } from "./access-control.ts";
import type { Operation } from "./operation.ts";
import { genericCode, mergeParams, Params } from "./params.ts";
import { errorBody, sendJson, sendText, successBody } from "./replies.ts";

export interface AppOptions {
  mounts: readonly Mount[];
  operations: readonly Operation[];
  logger: Logger;
  /** Extra routes outside the mounts (health). */
  extra?: (app: express.Express) => void;
  /** Body size cap for form posts, bytes. */
  bodyLimitBytes: number;
  /** Proxies whose X-Forwarded-For is believed (express `trust proxy` entries). */
  trustedProxies: readonly string[];
  /** Optional IP allow-list and Basic authentication in front of every mount. */
  access?: AccessControlOptions;
}

const FORM_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

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
    sendJson(res, 200, { code: 200203, message: `No handler found for ${req.method} ${path}` });
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
  // Node's querystring keeps only the first 1000 keys by default, which would silently turn a
  // later `topic` into a missing parameter; the request size limits bound the work instead.
  app.set("query parser", (qs: string) => parse(qs, "&", "=", { maxKeys: 0 }));
  opts.extra?.(app);
  // The web console: same origin as the API and behind the same access settings. A variant
  // mounted at /console itself keeps the path.
  if (!opts.mounts.some((m) => m.path === CONSOLE_PATH || m.path.startsWith(`${CONSOLE_PATH}/`))) {
    app.use(CONSOLE_PATH, ...(opts.access ? [accessControl(opts.access)] : []), consoleRouter(opts.mounts));
  }

  const formParser = express.urlencoded({
    extended: false,
    limit: opts.bodyLimitBytes,
    parameterLimit: 1_000_000,
    type: () => true,
  });
  const rawParser = express.raw({ limit: opts.bodyLimitBytes, type: () => true });
  const readForm = (req: Request, res: Response, next: NextFunction) => {
    const ct = req.headers["content-type"] ?? "";
    if (/^multipart\/form-data/i.test(ct)) {
      rawParser(req, res, (err?: unknown) => (err ? next(err) : readMultipart(req, ct).then(() => next(), next)));
      return;
    }
    // Form bodies count for POST, PUT, PATCH and DELETE only (the servlet container's POST
    // parsing plus Spring's form filter, behaviour.md 1.2); a GET's body is not a parameter source.
    if (!/^application\/x-www-form-urlencoded/i.test(ct) || !FORM_METHODS.has(req.method)) return next();
    // The original forced UTF-8 on every request (Spring Boot's CharacterEncodingFilter), so a
    // declared charset changes nothing; body-parser would reject or honour it.
    req.headers["content-type"] = "application/x-www-form-urlencoded";
    formParser(req, res, next);
  };

  for (const mount of opts.mounts) {
    const byPath = new Map<string, Operation>();
    for (const op of opts.operations) if (op.variants.includes(mount.variant)) byPath.set(op.path, op);
    const router = express.Router({ caseSensitive: true, strict: false });
    if (opts.access) router.use(accessControl(opts.access));
    router.use(readForm);
    router.use(async (req, res) => {
      const op = byPath.get(operationPath(req));
      if (!op) return unknownPath(mount, req, res);
      const params = new Params(mergeParams(req.query, req.body), mount.variant);
      try {
        const reply = await op.handle({ variant: mount.variant, params, req, remoteIp: req.ip ?? "" });
        if (reply.kind === "text") {
          sendText(res, 200, reply.text);
        } else if (reply.kind === "bare") {
          sendJson(res, 200, reply.body);
        } else {
          sendJson(res, 200, successBody(mount.variant, op.kind, reply.data));
        }
      } catch (err) {
        sendJson(res, 200, errorBody(mount.variant, toBrokerError(err, mount, op, opts.logger)));
      }
    });
    // Body-parser failures (malformed or oversized form, bad charset) come here.
    router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
      sendJson(res, 200, errorBody(mount.variant, bodyFailure(err, operationPath(req), mount, opts.bodyLimitBytes)));
    });
    app.use(mount.path, router);
  }

  app.use((req, res) => notFound(res, req.path));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    opts.logger.warn({ err, path: req.path }, "request failed outside any mount");
    sendJson(res, 400, { status: 400, error: "Bad Request", message: err instanceof Error ? err.message : String(err), path: req.path });
  });
  return app;
}

/**
 * Multipart text fields become parameters like form fields (the original's multipart resolver);
 * file parts are not parameters. A malformed body rejects, which answers the generic code.
 */
async function readMultipart(req: Request, contentType: string): Promise<void> {
  const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const form = await new Response(new Uint8Array(raw), { headers: { "content-type": contentType } }).formData();
  const fields: Record<string, string[]> = Object.create(null);
  for (const [name, value] of form) {
    if (typeof value === "string") fields[name] = [...(fields[name] ?? []), value];
  }
  req.body = fields;
}

/** Failure codes with a fixed message in the reference (behaviour.md 3.1). */
const DOCUMENTED_FAILURES: Record<number, "TRANSACTION_TIMEOUT" | "TRANSACTION_FAILED" | "RPC_FAILED"> = {
  200201: "TRANSACTION_TIMEOUT",
  200202: "TRANSACTION_FAILED",
  200214: "RPC_FAILED",
};

/** The operation a request under a mount names. Like Spring's path matching, ";…" segment parameters (e.g. ;jsessionid=…) are ignored. */
function operationPath(req: Request): string {
  return req.path
    .replace(/;[^/]*/g, "")
    .replace(/^\/+/, "")
    .replace(/\/$/, "");
}

/**
 * A body the parser refused. A publish body over the limit can only be that large through its
 * content (10240 characters at most), so it answers the content rule's 100201; anything else
 * is the generic code with what went wrong and how to fix it.
 */
function bodyFailure(err: unknown, path: string, mount: Mount, limit: number): BrokerError {
  const tooLarge = (err as { type?: unknown } | null)?.type === "entity.too.large";
  if (tooLarge && path === "rest/publish") return BrokerError.of("CONTENT_TOO_LONG");
  const msg = tooLarge
    ? `request body larger than ${limit} bytes (BODY_LIMIT_BYTES); send less, or raise the gateway's limit`
    : err instanceof Error
      ? err.message
      : String(err);
  return new BrokerError(genericCode(mount.variant), msg);
}

function toBrokerError(err: unknown, mount: Mount, op: Operation, logger: Logger): BrokerError {
  if (err instanceof BrokerError) return err;
  logger.error({ err, op: op.path, variant: mount.variant }, "operation failed unexpectedly");
  const code = op.failureCode?.(mount.variant, err) ?? genericCode(mount.variant);
  const detail = err instanceof Error ? err.message : String(err);
  const documented = DOCUMENTED_FAILURES[code];
  if (documented) return BrokerError.of(documented, { cause: err });
  return new BrokerError(code, `service unavailable: ${detail}`, { cause: err });
}
