import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ParamReadError } from "./param-collector.ts";
import { stopReading } from "./socket-reading.ts";

/**
 * What ends a request body other than its own last byte: the connection's framing broke after the
 * head (a malformed chunk size: llhttp stops and the body never ends), the body took longer than
 * HTTP_REQUEST_TIMEOUT_MS, or it came in more chunks than the gateway parses. Every body reader
 * (request-params.ts, multipart-reader.ts) asks `bodyFailure` before it starts and listens with
 * `onBodyFailure` while it reads, so no request waits for a body that cannot come; before this a
 * form POST with a chunk size of `zz` waited until the gateway restarted.
 */
const failures = new WeakMap<IncomingMessage, ParamReadError>();
const listeners = new WeakMap<IncomingMessage, Set<(err: ParamReadError) => void>>();

export function bodyFailure(req: IncomingMessage): ParamReadError | undefined {
  return failures.get(req);
}

/** Calls `cb` once if the body of `req` fails; returns the function that stops listening. */
export function onBodyFailure(req: IncomingMessage, cb: (err: ParamReadError) => void): () => void {
  let set = listeners.get(req);
  if (!set) {
    set = new Set();
    listeners.set(req, set);
  }
  set.add(cb);
  return () => set.delete(cb);
}

/** Ends the body of `req` with `err` for whoever reads it now or later; the first failure counts. */
export function failBody(req: IncomingMessage, err: ParamReadError): void {
  if (req.complete || failures.has(req)) return;
  failures.set(req, err);
  const set = listeners.get(req);
  listeners.delete(req);
  for (const cb of set ?? []) cb(err);
}

/** The HTTP status a body failure is answered with: framing and timeouts are the connection's fault, not the operation's. */
export function bodyFailureStatus(err: ParamReadError): number | undefined {
  if (err.kind === "bad-framing") return 400;
  if (err.kind === "body-timeout") return 408;
  return undefined;
}

/**
 * Fewest chunks a chunked body may always have; a larger BODY_LIMIT_BYTES allows one more per 4 KiB
 * of it. Each chunk costs a call from llhttp into JavaScript (about 1.5 µs on the machines this
 * runs on), and a client can put 10,000 one-byte chunks in 60 KB: 100,000 of them held the event
 * loop for half a second, and so did they on an operation that never reads a body (they are parsed
 * to be skipped). No client sends a body in chunks that small; curl sends 64 KiB chunks.
 */
const MIN_CHUNK_CAP = 4096;

export function chunkCapFor(bodyLimitBytes: number): number {
  return Math.max(MIN_CHUNK_CAP, Math.ceil(bodyLimitBytes / 4096));
}

interface BodyWatch {
  chunks: number;
  cap: number;
  res: ServerResponse;
  over: boolean;
  /** When the last body chunk came (performance.now()). */
  lastChunkAt: number;
}
const watches = new WeakMap<IncomingMessage, BodyWatch>();

/** The slot of llhttp's body callback on Node's parser object (`HTTPParser.kOnBody`). */
type Parser = { incoming?: IncomingMessage | null; constructor: { kOnBody?: number } } & Record<number, unknown>;
const COUNTING = Symbol("evb.countingOnBody");

/** What a request body may cost: its chunk count, and the longest pause between two chunks. */
export interface BodyLimits {
  chunkCap: number;
  idleTimeoutMs: number;
}

/**
 * Watches the body of `req` (answered through `res`), read or not. Past `chunkCap` chunks, or
 * after `idleTimeoutMs` without one, its body fails ("too-many-chunks", "body-timeout"), the
 * connection reads nothing more, and it closes once `res` is sent. A body that never ends (a chunk
 * size of 2^64-1 is framing llhttp accepts) thus ends after the idle timeout. Node's parser
 * objects are pooled and shared with HTTP clients, so the counting callback is put on a parser
 * once and counts only requests registered here; for anything else it is Node's own.
 */
export function watchBody(req: IncomingMessage, res: ServerResponse, limits: BodyLimits): void {
  if (req.complete || !hasBody(req)) return;
  const parser = (req.socket as Socket & { parser?: Parser | null }).parser;
  const slot = parser?.constructor.kOnBody;
  if (!parser || slot === undefined) return;
  const onBody = parser[slot] as ((this: Parser, chunk: Buffer) => unknown) & { [COUNTING]?: true };
  if (typeof onBody !== "function") return;
  if (!onBody[COUNTING]) {
    const counting = function countingOnBody(this: Parser, chunk: Buffer): unknown {
      const watch = this.incoming ? watches.get(this.incoming) : undefined;
      if (watch) {
        if (watch.over) return undefined;
        watch.lastChunkAt = performance.now();
        if (++watch.chunks > watch.cap) {
          refuseBody(
            this.incoming as IncomingMessage,
            watch.res,
            new ParamReadError("too-many-chunks", `request body in more than ${watch.cap} chunks; send it in fewer, larger chunks`),
          );
          return undefined;
        }
      }
      return onBody.call(this, chunk);
    };
    parser[slot] = Object.assign(counting, { [COUNTING]: true as const });
  }
  const watch: BodyWatch = { chunks: 0, cap: limits.chunkCap, res, over: false, lastChunkAt: performance.now() };
  watches.set(req, watch);
  armIdleTimer(req, watch, limits.idleTimeoutMs);
}

/** Whether a body follows the head of `req` (Content-Length above 0, or any Transfer-Encoding). */
function hasBody(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

/**
 * Bodies still arriving, checked for a pause longer than their idle timeout by one sweep timer
 * (running only while there are any), every quarter of the shortest timeout. A timer per request
 * was a timer per publish, each firing ten seconds later for a body long since read; a body
 * leaves the set at the first sweep after it is complete or answered.
 */
const arriving = new Map<IncomingMessage, { watch: BodyWatch; idleMs: number }>();
let sweeper: NodeJS.Timeout | undefined;

function armIdleTimer(req: IncomingMessage, watch: BodyWatch, idleMs: number): void {
  arriving.set(req, { watch, idleMs });
  if (sweeper) return;
  const every = Math.max(100, Math.floor(idleMs / 4));
  sweeper = setInterval(() => {
    const now = performance.now();
    for (const [r, { watch: w, idleMs: limit }] of arriving) {
      if (r.complete || w.over || w.res.writableFinished || r.socket.destroyed) {
        arriving.delete(r);
      } else if (now - w.lastChunkAt >= limit) {
        arriving.delete(r);
        refuseBody(
          r,
          w.res,
          new ParamReadError(
            "body-timeout",
            `no request body arrived for ${limit} ms (HTTP_BODY_IDLE_TIMEOUT_MS); send the body whole, at once`,
          ),
        );
      }
    }
    if (arriving.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }, every);
  sweeper.unref();
}

/**
 * Fails the body of `req` with `err`: the connection reads nothing more and closes once `res`, the
 * request's answer, is sent (what is left of the body is never read).
 */
export function refuseBody(req: IncomingMessage, res: ServerResponse, err: ParamReadError): void {
  const watch = watches.get(req);
  if (watch) watch.over = true;
  stopReading(req.socket);
  failBody(req, err);
  closeAfterAnswer(res, req.socket);
}

/** Ends the connection once `res` is sent (at once if it was): what is left of its request is never read. */
function closeAfterAnswer(res: ServerResponse, socket: Socket): void {
  if (res.writableFinished) {
    socket.destroySoon();
    return;
  }
  if (!res.headersSent) res.setHeader("Connection", "close");
  res.once("finish", () => socket.destroySoon());
}
