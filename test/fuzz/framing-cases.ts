import { STATUS_CODES } from "node:http";
import fc from "fast-check";
import type { Variant } from "@evb/domain";
import { type Exchange, readHead, type Stage, shown } from "./framing-socket.ts";
import type { HostileRequest, WirePair } from "./hostile-request.ts";
import type { OperationSpec } from "./operation-catalogue.ts";
import { isRefusal, type Reply, replyProblem } from "./reply-rules.ts";

/**
 * What a request may be answered with. `served`: a documented answer of the operation (which may
 * be its own refusal). `refused`: the server's raw answer, a close, or the operation's refusal,
 * never a success. `either`: any of those (a GET answered before its broken body is read).
 */
export type Verdict = "served" | "refused" | "either";

export interface Target {
  variant: Variant | null;
  mountPath: string;
  op: OperationSpec | null;
  subPath: string;
}

export interface WireRequest {
  method: string;
  target: Target;
  /** The query string as written, without "?"; "" for none. */
  query: string;
  /** Header lines besides Host and Connection, the framing headers included: what a case fuzzes. */
  headers: string[];
  body: Buffer;
  verdict: Verdict;
  /** Statuses the server itself (not an operation) may refuse this request with. */
  rawStatuses: readonly number[];
}

export interface FramingCase {
  /** The generator's choices in a few words, printed with a failure. */
  note: string;
  requests: WireRequest[];
  /** What is sent and when; by default every request's bytes in one write. */
  stages?: Stage[];
  halfClose?: boolean;
  /** The last request does not ask to close: the server must close the idle connection itself. */
  keepAlive?: boolean;
  /** Every answer, and the server's close, within this many ms of connecting. */
  boundMs: number;
  /** Large enough to hold the gateway's event loop: a concurrent /health is timed. */
  heavy: boolean;
}

/** Hang bound of a case that is sent whole: far above any documented wait (a publish waits 2 s here). */
export const HANG_BOUND_MS = 10_000;
/** The server's own refusals of malformed framing: answered before any operation sees the request. */
export const FRAMING_REFUSALS = [400, 413, 431] as const;
/** A request that did not arrive in time; a half-closed one may also be malformed HTTP at its end. */
export const TIMEOUT_REFUSALS = [408] as const;
const JSON_TYPE = "application/json;charset=UTF-8";

function requestBytes(r: WireRequest, close: boolean): Buffer {
  const head = [
    `${r.method} ${r.target.mountPath}${r.target.subPath === "" ? "" : `/${r.target.subPath}`}${r.query === "" ? "" : `?${r.query}`} HTTP/1.1`,
    "Host: 127.0.0.1",
    ...r.headers,
    ...(close ? ["Connection: close"] : []),
  ];
  return Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), r.body]);
}

/** Every request of `c` back to back, the last asking the server to close unless the case keeps it alive. */
export function caseBytes(c: Pick<FramingCase, "requests" | "keepAlive">): Buffer {
  return Buffer.concat(c.requests.map((r, i) => requestBytes(r, i === c.requests.length - 1 && !c.keepAlive)));
}

export function stagesOf(c: FramingCase): Stage[] {
  return c.stages ?? [{ bytes: caseBytes(c), delayMs: 0 }];
}

export function describeCase(c: FramingCase): string {
  const stages = stagesOf(c);
  const timing = stages.length > 1 ? `; ${stages.length} writes, pauses ${stages.map((s) => s.delayMs).join("/")} ms` : "";
  const end = c.halfClose ? "; then half-closed" : c.keepAlive ? "; kept alive" : "";
  return `${c.note} (${c.requests.length} request(s)${timing}${end}): ${shown(Buffer.concat(stages.map((s) => s.bytes)))}`;
}

/** `c`, printed by fast-check (a counterexample) as its note and raw bytes. */
export function printableCase<C extends FramingCase>(c: C): C {
  return Object.defineProperty(c, fc.toStringMethod, { value: () => describeCase(c), enumerable: false });
}

function pairs(query: string): WirePair[] {
  return query === "" ? [] : query.split("&").map((p) => ({ name: p.split("=")[0] ?? "", value: p.slice(p.indexOf("=") + 1) }));
}

/** The request as reply-rules sees one: method, target and query decide an operation's documented answer. */
function modelOf(r: WireRequest): HostileRequest {
  return { method: r.method, ...r.target, query: pairs(r.query), bodyKind: "none", bodyPairs: [], bodyText: "", contentType: null };
}

/** The raw answer's documented shape: `{status, error, message}` JSON, and the connection closed. */
function rawShapeProblem(status: number, headers: Map<string, string>, body: Buffer | null): string | null {
  if (headers.get("content-type") !== JSON_TYPE) return `raw ${status} with Content-Type ${headers.get("content-type")}`;
  if (headers.get("connection")?.toLowerCase() !== "close") return `raw ${status} without Connection: close`;
  if (body === null) return null;
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  } catch {
    return `raw ${status} body is not JSON`;
  }
  const keys = JSON.stringify(Object.keys(json));
  if (keys !== '["status","error","message"]') return `raw ${status} body keys ${keys}`;
  if (json.status !== status || json.error !== STATUS_CODES[status] || typeof json.message !== "string") return `raw ${status} body fields`;
  return null;
}

/**
 * What is wrong with the server's side of exchange `ex` for case `c`, or null. The answers must
 * come in request order, each complete and documented for its request; the first request left
 * unanswered (by a raw refusal or a close) must be one that may be refused, or follow one whose
 * body may have broken the stream; a raw refusal ends the connection; a HEAD answer, raw ones
 * included, carries no body bytes; and the server closes within the case's bound.
 */
export function judge(c: FramingCase, ex: Exchange): string | null {
  const reqs = c.requests;
  const bytes = ex.bytes;
  const mayEndAt = (i: number) => (reqs[i] !== undefined && reqs[i].verdict !== "served") || (i > 0 && reqs[i - 1]?.verdict !== "served");
  let offset = 0;
  let i = 0;
  while (offset < bytes.length) {
    const head = readHead(bytes, offset);
    if (!head) {
      const after = i > 0 && reqs[i - 1]?.method === "HEAD" ? "after the answer to a HEAD" : `after answer ${i}`;
      return `bytes ${after} that are no HTTP answer: ${shown(bytes.subarray(offset), 300)}`;
    }
    const { status, headers, bodyStart } = head;
    if (status >= 500) return `HTTP ${status} to request ${i + 1}: ${shown(bytes.subarray(offset), 600)}`;
    if (status !== 200 && status !== 404) {
      // The server's own answer: to request i, or to the stream after request i-1's broken body.
      const refused =
        reqs[i]?.verdict !== "served" && reqs[i] ? reqs[i] : i > 0 && reqs[i - 1]?.verdict !== "served" ? reqs[i - 1] : undefined;
      if (!refused)
        return `raw HTTP ${status} where request ${i + 1} of ${reqs.length} is well-formed: ${shown(bytes.subarray(offset), 600)}`;
      if (!refused.rawStatuses.includes(status)) {
        return `raw HTTP ${status} to request ${i + 1}; documented here: ${refused.rawStatuses.join("/")} or a close`;
      }
      const length = Number(headers.get("content-length"));
      const bodyEnd = refused.method === "HEAD" ? bodyStart : bodyStart + length;
      // A reset (the server closing with the request partly unread) may discard the end of it.
      const cut = bodyEnd > bytes.length;
      if (cut && !ex.reset) {
        return `raw ${status} to ${refused.method} declares Content-Length ${length}, then closes after ${bytes.length - bodyStart} body byte(s)`;
      }
      // No body at all (Content-Length 0) is what the gateway answers when it cannot tell the
      // refused head's method (a pipelined head after a body): right for a HEAD and a GET alike.
      const problem = rawShapeProblem(
        status,
        headers,
        refused.method === "HEAD" || cut || length === 0 ? null : bytes.subarray(bodyStart, bodyEnd),
      );
      if (problem) return problem;
      if (bodyEnd < bytes.length) {
        const what = refused.method === "HEAD" ? `body bytes after the head of a raw ${status} to HEAD` : `bytes after a raw ${status}`;
        return `${what}: ${shown(bytes.subarray(bodyEnd), 300)}`;
      }
      return ex.timedOut ? `no close within ${c.boundMs} ms after a raw ${status}` : null;
    }
    const r = reqs[i];
    if (!r) return `more answers than the ${reqs.length} request(s) sent: ${shown(bytes.subarray(offset), 300)}`;
    const length = r.method === "HEAD" ? 0 : Number(headers.get("content-length"));
    if (!Number.isInteger(length)) return `answer ${i + 1} has no Content-Length`;
    if (bodyStart + length > bytes.length) return `answer ${i + 1} cut short of its Content-Length`;
    const body = bytes.subarray(bodyStart, bodyStart + length).toString("utf8");
    const reply: Reply = { status, contentType: headers.get("content-type") ?? "", body, reset: ex.reset };
    const problem = replyProblem(modelOf(r), reply);
    if (problem) return `request ${i + 1}: ${problem}; answer ${JSON.stringify(body.slice(0, 300))}`;
    if (r.verdict === "refused" && r.method !== "HEAD" && !isRefusal(reply))
      return `request ${i + 1} is malformed but was served: ${body.slice(0, 300)}`;
    offset = bodyStart + length;
    i++;
  }
  if (ex.timedOut) {
    return i === reqs.length
      ? `idle connection not closed within ${c.boundMs} ms`
      : `${i} of ${reqs.length} answered, then nothing within ${c.boundMs} ms`;
  }
  // A server that closes on a refused request with some of it unread resets the connection, and a
  // reset discards answers the client had not read yet: only a crash (the health check) or no
  // refusable request left makes missing answers a failure then.
  const discarded = ex.reset && reqs.slice(i).some((r) => r.verdict !== "served");
  if (i < reqs.length && !mayEndAt(i) && !discarded) return `closed after ${i} of ${reqs.length} answers; request ${i + 1} is well-formed`;
  return null;
}
