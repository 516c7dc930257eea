import { BrokerError, type Logger } from "@evb/domain";
import { type AccessControl, keyRecordOf } from "../http/access-control.ts";
import type { Operation, OperationContext } from "../http/operation.ts";
import { requiredRole } from "../http/operation-roles.ts";
import { genericCode, Params } from "../http/params.ts";
import { data, replyPayload } from "../http/replies.ts";

/** Most calls one batch may carry: a console page reads a handful per refresh. */
export const MAX_BATCH_CALLS = 32;

/** Reads that need the `admin` role (they show receivers' URLs and answers); every other batched call must need only `read`. */
const ADMIN_READS = new Set(["admin/deliveryAttempts", "admin/eventDeliveries"]);

export interface BatchDeps {
  /** Every operation of the gateway (this one included); looked up per variant and path. */
  operations: readonly Operation[];
  /** The access control in front of the mounts, whose checks each call passes on its own. */
  access?: AccessControl;
  logger: Logger;
}

/** One call's answer: the payload an operation answered (code 0), a broker error, or an HTTP refusal (403, 404). */
type BatchResult = { code: 0; data: unknown } | { code: number; message: string | null } | { status: 403 | 404; message: string };

/** `[{op, params}]` from the `calls` parameter; a malformed list answers the generic code with what is wrong. */
function parseCalls(raw: string, variant: OperationContext["variant"]): { op: string; params: Record<string, string> }[] {
  const bad = (why: string) => new BrokerError(genericCode(variant), `calls: ${why}`);
  let list: unknown;
  try {
    list = JSON.parse(raw);
  } catch {
    throw bad('not JSON; send [{"op":"admin/getVersion","params":{}}, …]');
  }
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BATCH_CALLS) throw bad(`a list of 1–${MAX_BATCH_CALLS} calls`);
  return list.map((c) => {
    const op = (c as { op?: unknown })?.op;
    const params = (c as { params?: unknown })?.params ?? {};
    if (typeof op !== "string" || typeof params !== "object" || params === null || Array.isArray(params))
      throw bad("each call is {op, params}");
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) flat[k] = String(v);
    return { op, params: flat };
  });
}

/**
 * admin/batch?calls=[{op, params}, …] (an extension, for the web console): several read
 * operations of this variant answered in one request, so that a console polling a page writes one
 * access-log line per refresh, not one per read. Each call passes the checks it would pass alone
 * (the caller's key's role and group for that operation, access-control.ts) and answers on its
 * own: `{code: 0, data}`, its broker error `{code, message}`, or `{status: 403|404}` for a call
 * not allowed or not a read this variant has. Writes are never batched: they keep their own
 * request and access-log line. The calls run concurrently.
 */
export function batchOperation(deps: BatchDeps): Operation {
  const byVariant = (variant: string, path: string) =>
    deps.operations.find((op) => op.path === path && op.variants.includes(variant as OperationContext["variant"]));
  const isRead = (op: Operation) => op.path !== "admin/batch" && (requiredRole(op) === "read" || ADMIN_READS.has(op.path));

  const one = async (ctx: OperationContext, call: { op: string; params: Record<string, string> }): Promise<BatchResult> => {
    const op = byVariant(ctx.variant, call.op);
    if (!op || !isRead(op)) return { status: 404, message: `no read operation ${call.op} to batch` };
    const params = new Params(new Map(Object.entries(call.params).map(([k, v]) => [k, [v]])), ctx.variant);
    const verdict = deps.access ? await deps.access.checks.permits(keyRecordOf(ctx.req), op, params.optional("groupId")) : "ok";
    if (verdict !== "ok") return { status: 403, message: "not allowed" };
    try {
      return { code: 0, data: replyPayload(await op.handle({ ...ctx, params })) };
    } catch (err) {
      if (err instanceof BrokerError) return { code: err.code, message: err.wireMessage };
      const requestId = ctx.req.res?.getHeader("x-request-id");
      deps.logger.error({ err, op: op.path, variant: ctx.variant }, "batched operation failed unexpectedly");
      const documented = op.failureCode?.(ctx.variant, err);
      const failed = documented ? BrokerError.of(documented) : new BrokerError(genericCode(ctx.variant), "service unavailable");
      return { code: failed.code, message: `${failed.wireMessage} (request id ${String(requestId)}; the gateway log has the detail)` };
    }
  };

  return {
    path: "admin/batch",
    kind: "admin",
    variants: ["L", "M", "E"],
    // Each batched call is checked on its own.
    groupScope: "groupless",
    async handle(ctx) {
      const calls = parseCalls(ctx.params.required("calls"), ctx.variant);
      return data(await Promise.all(calls.map((c) => one(ctx, c))));
    },
  };
}
