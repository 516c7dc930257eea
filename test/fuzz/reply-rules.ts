import { BROKER_ERRORS, GENERIC_CODE } from "@evb/domain";
import { type HostileRequest, targetOf, wireBytes } from "./hostile-request.ts";

export interface Reply {
  status: number;
  contentType: string;
  body: string;
  /** The connection was reset, possibly before the answer could be read. */
  reset: boolean;
}

/** Splits what a server sent on a `Connection: close` exchange into status, Content-Type and body. */
export function parseReply(text: string, reset = false): Reply {
  const headEnd = text.indexOf("\r\n\r\n");
  const head = headEnd < 0 ? text : text.slice(0, headEnd);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
  const contentType = /\r\ncontent-type: *([^\r\n]*)/i.exec(head)?.[1] ?? "";
  return { status, contentType, body: headEnd < 0 ? "" : text.slice(headEnd + 4), reset };
}

const JSON_TYPE = "application/json;charset=UTF-8";
const MAX_HEAD_BYTES = 256 * 1024;
/** Method tokens Node's HTTP parser knows; anything else is malformed HTTP to it (a JSON 400). */
const PARSER_METHODS = new Set(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND"]);
const SPECIFIC_CODES = new Set<number>(Object.values(BROKER_ERRORS).map((e) => e.code));

function headOf(r: HostileRequest): string {
  const raw = wireBytes(r).toString("latin1");
  return raw.slice(0, raw.indexOf("\r\n\r\n"));
}

/** Where Node's parser may answer 400 or 431 before the broker sees the request (docs/variants.md). */
function parserMayRefuse(r: HostileRequest, status: number): boolean {
  const head = headOf(r);
  if (status === 431) return head.length > MAX_HEAD_BYTES;
  // A raw space in the target splits the request line; bytes outside visible ASCII may be refused.
  const target = targetOf(r);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: bytes the parser may refuse in a request head
  const odd = /[\u0000-\u001f\u007f-\u00ff]/.test(head.replace(/\r\n/g, "")) || target.includes(" ");
  if (status === 400) return !PARSER_METHODS.has(r.method) || odd;
  return false;
}

function keysAre(body: Record<string, unknown>, keys: string[]): boolean {
  return JSON.stringify(Object.keys(body)) === JSON.stringify(keys);
}

/** The broker-exception object in the variant's shape with a documented code (behaviour.md 2.1, 3.1). */
function errorProblem(r: HostileRequest, body: Record<string, unknown>): string | null {
  const l = r.variant === "L";
  if (!keysAre(body, l ? ["code", "message", "data"] : ["code", "message"])) return "error keys not in the variant's shape";
  if (l && body.data !== null) return "L error with non-null data";
  if (typeof body.message !== "string" && body.message !== null) return "error message neither a string nor null";
  const generic = l ? GENERIC_CODE.modern : GENERIC_CODE.legacy;
  if (body.code !== generic && !SPECIFIC_CODES.has(body.code as number)) return `undocumented code ${String(body.code)}`;
  if (typeof body.message === "string" && INTERNAL_DETAIL.test(body.message)) return "error message carries internal detail";
  return null;
}

/** Text of internal errors (Node, zlib, Postgres, Redis) that no reply may carry (probe report, defect 10). */
const INTERNAL_DETAIL =
  /ECONN|ETIMEDOUT|EPIPE|incorrect header check|unexpected end of file|Connection terminated|Maximum call stack|at .+\(.+:\d+:\d+\)/;

/** What is wrong with `reply` as the answer to `r`, or null when it is a documented answer. */
export function replyProblem(r: HostileRequest, reply: Reply): string | null {
  const { status } = reply;
  // The parser answers a bad head at once and closes; the rest of a large request then meets a
  // reset, which can discard the answer before it is read. Only there may an answer be missing.
  if (status === 0) return reply.reset && (parserMayRefuse(r, 400) || parserMayRefuse(r, 431)) ? null : "no HTTP answer";
  if (status >= 500) return `HTTP ${status}`;
  if (status !== 200 && status !== 404) return parserMayRefuse(r, status) ? null : `undocumented HTTP ${status}`;
  if (r.method === "HEAD") return null;
  if (status === 404) {
    if (r.variant !== null && (r.variant !== "L" || r.op !== null)) return "404 for a path the variant serves with 200";
    const body = JSON.parse(reply.body) as Record<string, unknown>;
    return keysAre(body, ["timestamp", "status", "error", "message", "path"]) && body.status === 404
      ? null
      : "404 body not the framework's";
  }
  if (r.variant === null) return "200 outside every mount";
  if (r.variant === "L" && r.op === null) return "L answered 200 for an unknown path";
  if (r.op?.path === "rest/subscribe" && reply.contentType === "text/plain;charset=UTF-8") {
    return /^[0-9a-f-]{36}$/.test(reply.body) ? null : "subscribe text reply is not an id";
  }
  if (reply.contentType !== JSON_TYPE) return `Content-Type ${reply.contentType}`;
  let body: unknown;
  try {
    body = JSON.parse(reply.body);
  } catch {
    return "body is not JSON";
  }
  if (r.op === null) {
    const path = targetOf(r).split("?")[0];
    const b = body as Record<string, unknown>;
    return b.code === 200203 &&
      keysAre(b, ["code", "message"]) &&
      typeof b.message === "string" &&
      b.message.startsWith(`No handler found for ${r.method} `)
      ? null
      : `M/E unknown path ${path} not answered 200203`;
  }
  if (body !== null && typeof body === "object" && !Array.isArray(body) && "code" in body) {
    const b = body as Record<string, unknown>;
    if (b.code !== 0) return errorProblem(r, b);
    const enveloped = r.variant === "L" || (r.variant === "M" && r.op.path.startsWith("admin/"));
    if (!enveloped) return "success envelope where the variant answers bare";
    return keysAre(b, ["code", "message", "data"]) && b.message === "success" ? null : "success envelope keys or message";
  }
  if (r.variant === "L" && r.op.path !== "rest/publish") return "bare reply in L";
  return null;
}

/** True when `reply` refuses the request: an error object, or an unknown-path or parser answer. */
export function isRefusal(reply: Reply): boolean {
  if (reply.status !== 200) return true;
  try {
    const body = JSON.parse(reply.body) as { code?: unknown };
    return typeof body?.code === "number" && body.code !== 0;
  } catch {
    return false;
  }
}
