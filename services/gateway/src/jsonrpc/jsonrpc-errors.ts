import type { BrokerError, Spelling } from "@evb/domain";

/** A JSON-RPC error object. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The JSON-RPC errors that are not the broker's, with the original server's texts (its library,
 * jsonrpc4j): the four of the standard, and two of the implementation range for an API key's
 * refusal (the original had no keys; the words are the HTTP side's).
 */
const RPC_ERRORS = {
  PARSE_ERROR: { code: -32700, message: "JSON parse error" },
  INVALID_REQUEST: { code: -32600, message: "invalid request" },
  METHOD_NOT_FOUND: { code: -32601, message: "method not found" },
  INVALID_PARAMS: { code: -32602, message: "method parameters invalid" },
  FORBIDDEN: { code: -32003, message: "not allowed" },
  RATE_LIMITED: { code: -32029, message: "publish rate limit of this key reached; retry later" },
} as const satisfies Record<string, { code: number; message: string }>;

export type RpcErrorName = keyof typeof RPC_ERRORS;

/** A protocol error by name; `detail` (what was wrong, how to fix it) follows the library's text after ": ". */
export function rpcError(name: RpcErrorName, detail?: string, data?: unknown): RpcError {
  const e = RPC_ERRORS[name];
  const out: RpcError = { code: e.code, message: detail === undefined ? e.message : `${e.message}: ${detail}` };
  if (data !== undefined) out.data = data;
  return out;
}

/**
 * A broker error in the one shape every release of the original's Java client reads: the
 * broker's code and message (what the v1.1 and v1.2 clients turn into their BrokerException), and
 * `data` naming the exception class with the message (what the v1.0 client instantiates, by that
 * name: `com.webank.weevent.sdk.BrokerException` under BRAND=weevent). Answered HTTP 200.
 * The message is never null: the v1.1 and v1.2 clients fail on an error without one.
 */
export function brokerRpcError(err: BrokerError, spelling: Spelling): RpcError {
  const message = err.wireMessage ?? err.message;
  return { code: err.code, message, data: { exceptionTypeName: spelling.brokerExceptionClass, message } };
}

/**
 * The HTTP status of a reply that is not a batch, as the original's library chose it from the
 * error's code: none 200; parse error and invalid request 400; method not found 404; the other
 * codes of the reserved range (-32602, -32603, -32000…-32099) 500; a broker code 200. An API key's
 * refusal is HTTP's own 403 or 429 (with Retry-After), as on every other path of the gateway.
 */
export function httpStatusOf(error: RpcError | undefined): number {
  if (error === undefined) return 200;
  const { code } = error;
  if (code === RPC_ERRORS.FORBIDDEN.code) return 403;
  if (code === RPC_ERRORS.RATE_LIMITED.code) return 429;
  if (code === RPC_ERRORS.PARSE_ERROR.code || code === RPC_ERRORS.INVALID_REQUEST.code) return 400;
  if (code === RPC_ERRORS.METHOD_NOT_FOUND.code) return 404;
  if (code === -32602 || code === -32603 || (code >= -32099 && code <= -32000)) return 500;
  return 200;
}

/** A batch's HTTP status, as the original's library answered it: 500 when any of its replies is an error, else 200. */
export function batchHttpStatus(errors: readonly (RpcError | undefined)[]): number {
  return errors.some((e) => e !== undefined) ? 500 : 200;
}
