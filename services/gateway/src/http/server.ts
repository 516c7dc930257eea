import { createServer, type IncomingMessage, type RequestListener, type Server, STATUS_CODES, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { TlsOptions } from "node:tls";
import { chunkCapFor, failBody, refuseBody, watchBody } from "./body-guard.ts";
import { ParamReadError } from "./param-collector.ts";
import { JSON_CONTENT_TYPE, sendJson } from "./replies.ts";
import { RequestScheduler } from "./request-scheduler.ts";

/**
 * Room for the request line and headers: a GET carrying the largest content the interface
 * accepts (10240 characters, up to 12 bytes each when percent-encoded, plus extensions) fits,
 * so such a publish is answered by the broker's own rules rather than Node's 16 KiB default.
 */
const MAX_REQUEST_HEAD_BYTES = 256 * 1024;

/**
 * Most header lines a request may carry. Node's parser has a count limit of its own that it
 * reports as the same overflow as the byte limit, so a request with many small headers was told
 * its head was too large; the parser's count is switched off and this one is checked here instead.
 */
const MAX_HEADER_LINES = 1000;

/**
 * Answers still owed on each connection: a pipelined connection can have several requests
 * dispatched and unanswered when a later request on it turns out malformed (or is a CONNECT).
 */
interface Connection {
  inFlight: number;
  /** The raw answer to write, and close with, once the answers in flight are done. */
  deferred?: () => void;
  /** A raw answer was written or is queued: the connection ends with it. */
  closing: boolean;
  /** The newest request and its answer: the only one whose body the parser can still be reading. */
  latest?: { req: IncomingMessage; res: ServerResponse };
  /** Requests whose head was read on this connection. */
  requests: number;
  /**
   * The head being read when a read began on an idle connection (nothing in flight, no body
   * pending): its first token, and how many requests the connection had then. Until that count
   * moves, a refused head is that one (see methodOfFailedHead).
   */
  pendingHead?: { token: string; requests: number };
  /** The read being parsed, when it began with a request line, until a request of it was emitted. */
  freshRead?: Buffer;
  /** The listener that watches reads for request heads; removed when the connection becomes a WebSocket. */
  sniff?: (chunk: Buffer) => void;
}
const connections = new WeakMap<Duplex, Connection>();

function connectionOf(socket: Duplex): Connection {
  let c = connections.get(socket);
  if (!c) {
    c = { inFlight: 0, closing: false, requests: 0 };
    connections.set(socket, c);
  }
  return c;
}

/** Counts one answer in flight on `socket` until `res` is done (sent, or its connection gone). */
function trackAnswer(socket: Duplex, req: IncomingMessage, res: ServerResponse): void {
  const c = connectionOf(socket);
  c.inFlight++;
  c.requests++;
  c.latest = { req, res };
  res.once("close", () => {
    c.inFlight--;
    if (c.inFlight === 0 && c.deferred) {
      const answer = c.deferred;
      c.deferred = undefined;
      answer();
    }
  });
}

/**
 * A raw JSON answer on `socket` for a request that never reaches the app, written after the
 * answers still in flight on that connection (Node writes pipelined answers in order; writing
 * ours at once would overtake theirs and end the connection under them). Once per connection.
 */
function rawJsonAnswerAfterInFlight(socket: Duplex, status: number, message: string, method: string | undefined): void {
  const c = connectionOf(socket);
  if (c.closing) return;
  c.closing = true;
  const answer = () => {
    if (socket.writable) rawJsonAnswer(socket, status, message, method);
    else if (!socket.writableEnded) socket.destroy();
  };
  if (c.inFlight === 0) answer();
  else c.deferred = answer;
}

/**
 * One JSON answer written straight to a socket, for requests that never reach the app. An answer
 * to a HEAD has no body (a client would read it as the next answer), and so has one to a request
 * whose method cannot be told (`undefined`): `Content-Length: 0` is right whatever it was.
 */
function rawJsonAnswer(socket: Duplex, status: number, message: string, method: string | undefined): void {
  const reason = STATUS_CODES[status] ?? "Error";
  const json = JSON.stringify({ status, error: reason, message });
  const body = method === undefined ? "" : json;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${method === "HEAD" ? "" : body}`,
  );
}

/** A request line's method at the start of `text` (after blank lines a client may send between requests). */
const REQUEST_LINE_START = /^(?:\r?\n)*([A-Za-z!#$%&'*+.^_`|~0-9-]{1,20}) /;
/** The methods a refused head is recognised by; anything else found where one may start could be body bytes. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"]);

/**
 * Whether a refused head may be a HEAD, so that its raw answer carries a body only where one is
 * certainly wanted: "HEAD", another method, or undefined when it cannot be told. A head that
 * began a read on an idle connection (a connection's first request, or the next one of a client
 * that waits for each answer) is known from that read's first bytes. A pipelined one is
 * recognised right after a blank line before the error in the read that failed; after a body, or
 * when it began in an earlier read, its start is not known.
 */
function methodOfFailedHead(err: { rawPacket?: unknown; bytesParsed?: unknown }, c: Connection): string | undefined {
  if (c.pendingHead && c.pendingHead.requests === c.requests) return c.pendingHead.token;
  const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined;
  if (!raw) return undefined;
  const upTo = typeof err.bytesParsed === "number" ? err.bytesParsed : raw.length;
  const blank = raw.lastIndexOf("\r\n\r\n", Math.max(0, upTo - 1));
  if (blank < 0) return undefined;
  const method = REQUEST_LINE_START.exec(raw.subarray(blank + 4, blank + 40).toString("latin1"))?.[1];
  return method !== undefined && KNOWN_METHODS.has(method) ? method : undefined;
}

/**
 * The size of the first chunk of a chunked body, read from the raw bytes of a read that began
 * with its request line (so its first blank line ends that request's head), or undefined when the
 * read does not hold it. A size of more than 15 hex digits counts as infinite.
 */
function firstChunkSize(read: Buffer): number | undefined {
  const headEnd = read.indexOf("\r\n\r\n");
  if (headEnd < 0) return undefined;
  const line = /^([0-9a-fA-F]+)[;\r\t ]/.exec(read.subarray(headEnd + 4, headEnd + 4 + 40).toString("latin1"));
  if (!line) return undefined;
  const digits = (line[1] as string).replace(/^0+/, "");
  return digits.length > 15 ? Number.POSITIVE_INFINITY : Number.parseInt(digits || "0", 16);
}

/** How many Host header lines `req` carries (Node keeps only the first in `headers.host`). */
function hostHeaderCount(req: IncomingMessage): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === "host") n++;
  return n;
}

/** The gateway's waits on a client, in milliseconds (HTTP_*_TIMEOUT_MS, docs/configuration.md). */
export interface ServerLimits {
  /** A whole request head must arrive within this (slow-header clients), else 408 and close. */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this, else 408 and close; the wait for the answer is not counted. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** The longest pause between two pieces of a request body, else 408 and close (body-guard.ts). */
  bodyIdleTimeoutMs: number;
  /** BODY_LIMIT_BYTES: sets how many chunks a body may come in (body-guard.ts). */
  bodyLimitBytes: number;
}

/** Takes over upgrade requests for some paths (STOMP over WebSocket); other upgrade requests stay ordinary requests. */
export interface UpgradeHandler {
  handles(req: IncomingMessage): boolean;
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void>;
}

/** How often Node looks for requests past their head or request timeout: the timeouts' resolution. */
const TIMEOUT_CHECK_MS = 1_000;

function jsonAnswer(res: ServerResponse, status: number, message: string): void {
  res.setHeader("Connection", "close");
  sendJson(res, status, { status, error: STATUS_CODES[status] ?? "Error", message });
}

/** A refusal of the parser's: the status and what to tell the caller. */
function clientErrorAnswer(err: NodeJS.ErrnoException): { status: number; message: string } {
  if (err.code === "HPE_HEADER_OVERFLOW") {
    return {
      status: 431,
      message: `the request line and headers exceed ${MAX_REQUEST_HEAD_BYTES} bytes; send large parameters (content) as a POST form body`,
    };
  }
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return {
      status: 408,
      message: "the request did not arrive in time (HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS); send it whole, at once",
    };
  }
  return { status: 400, message: `malformed HTTP request (${err.code ?? err.message})` };
}

/**
 * The gateway's HTTP server. Whatever Node would answer on its own, with an empty body or by
 * dropping the connection, gets a JSON answer that says what was wrong and what to do: a head
 * above MAX_REQUEST_HEAD_BYTES (431) or with more than MAX_HEADER_LINES lines (431), malformed
 * HTTP (400), a request that did not arrive within its timeouts (408), an HTTP/1.1 request without
 * Host or with more than one (400, RFC 9112 3.2), an `Expect` other than 100-continue (417) and
 * CONNECT, which no operation serves (405). The raw answers (malformed HTTP, CONNECT) wait for the
 * answers still in flight on a pipelined connection, then close it; a HEAD's carries no body.
 * Framing that breaks inside a body already handed to the app ends that body (body-guard.ts), so
 * its request answers at once. No request holds the event loop: requests start time-sliced
 * (request-scheduler.ts) and a body's chunks are counted (body-guard.ts). An upgrade request for
 * a path `upgrades` handles (STOMP's `<context>/stomp`) is handed to it; any other is an ordinary request.
 * With `tls` (tls/tls-listeners.ts) it is an HTTPS server with the same behaviour inside TLS.
 */
export function createGatewayServer(
  app: RequestListener,
  limits: ServerLimits,
  upgrades?: UpgradeHandler,
  tls?: TlsOptions,
): Server | HttpsServer {
  const options = {
    maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
    requireHostHeader: false,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    shouldUpgradeCallback: (req: IncomingMessage) => upgrades?.handles(req) ?? false,
  };
  const listener = requestListener(app, limits);
  const server = tls ? createHttpsServer({ ...options, ...tls }, listener) : createServer(options, listener);
  server.maxHeadersCount = 0;
  // Under TLS the request heads are in the decrypted stream, the TLS socket's.
  server.on(tls ? "secureConnection" : "connection", sniffRequestHeads);
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // No longer HTTP: its reads are WebSocket frames, not request heads.
    const c = connectionOf(socket);
    if (c.sniff) socket.off("data", c.sniff);
    c.freshRead = undefined;
    upgrades?.upgrade(req, socket, head).catch(() => socket.destroy());
  });
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    trackAnswer(req.socket, req, res);
    jsonAnswer(res, 417, "the only Expect value served is 100-continue; send the request without it");
  });
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    rawJsonAnswerAfterInFlight(socket, 405, "CONNECT is not served: this is not a proxy; call an operation with GET or POST", "CONNECT");
  });
  server.on("clientError", answerClientError);
  return server;
}

/**
 * Every request whose head Node read: counted on its connection, its body watched, a first
 * chunk larger than the body limit refused, then started by the scheduler in its turn.
 */
function requestListener(app: RequestListener, limits: ServerLimits): (req: IncomingMessage, res: ServerResponse) => void {
  const scheduler = new RequestScheduler();
  const body = { chunkCap: chunkCapFor(limits.bodyLimitBytes), idleTimeoutMs: limits.bodyIdleTimeoutMs };
  return (req, res) => {
    trackAnswer(req.socket, req, res);
    watchBody(req, res, body);
    refuseLargeFirstChunk(req, res, limits.bodyLimitBytes);
    scheduler.admit(req.socket, res, () => dispatchChecked(app, req, res));
  };
}

/** Refuses a chunked body whose first chunk, as the raw read shows it, is larger than `bodyLimitBytes`. */
function refuseLargeFirstChunk(req: IncomingMessage, res: ServerResponse, bodyLimitBytes: number): void {
  const c = connectionOf(req.socket);
  const read = c.freshRead;
  c.freshRead = undefined;
  const size = read && req.headers["transfer-encoding"] !== undefined ? firstChunkSize(read) : undefined;
  if (size === undefined || size <= bodyLimitBytes) return;
  // Like a Content-Length over the limit, refused before any of it is read; a size llhttp
  // accepts (up to 2^64-1) would otherwise be waited for until the body idle timeout.
  refuseBody(
    req,
    res,
    new ParamReadError(
      "body-too-large",
      `a body chunk of ${Number.isFinite(size) ? `${size} bytes` : "more than 2^60 bytes"} is larger than BODY_LIMIT_BYTES (${bodyLimitBytes})`,
    ),
  );
}

/** Hands `req` to the app unless its header lines or Host headers are refused. */
function dispatchChecked(app: RequestListener, req: IncomingMessage, res: ServerResponse): void {
  if (req.rawHeaders.length / 2 > MAX_HEADER_LINES) {
    jsonAnswer(res, 431, `more than ${MAX_HEADER_LINES} header lines; send fewer headers`);
  } else if (req.httpVersion === "1.1" && req.headers.host === undefined) {
    jsonAnswer(res, 400, "an HTTP/1.1 request needs a Host header");
  } else if (hostHeaderCount(req) > 1) {
    jsonAnswer(res, 400, "more than one Host header; send exactly one");
  } else {
    app(req, res);
  }
}

/**
 * Watches a new connection's reads for the start of request heads. Reading the socket in
 * JavaScript (rather than Node's parser reading it natively) is what lets a raw answer know
 * whether the request it refuses is a HEAD; it costs about a microsecond per read.
 */
function sniffRequestHeads(socket: Socket): void {
  const c = connectionOf(socket);
  c.sniff = (chunk: Buffer) => {
    const method = REQUEST_LINE_START.exec(chunk.subarray(0, 24).toString("latin1"))?.[1];
    const idle = c.inFlight === 0 && (c.latest === undefined || c.latest.req.complete);
    const inHead = c.pendingHead !== undefined && c.pendingHead.requests === c.requests;
    // Bytes that begin a message: whatever they are, that message is a HEAD only if they say so.
    if (idle && !inHead) c.pendingHead = { token: method ?? "", requests: c.requests };
    c.freshRead = method ? chunk : undefined;
  };
  socket.prependListener("data", c.sniff);
}

/** What Node's parser refused (malformed HTTP, a head too large, a timeout): a raw JSON answer, then close. */
function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: unknown }, socket: Duplex): void {
  if (!socket.writable || err.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const c = connectionOf(socket);
  const { status, message } = clientErrorAnswer(err);
  const open = c.latest && !c.latest.req.complete && !c.latest.res.writableFinished ? c.latest : undefined;
  if (open) {
    // The head was read and handed to the app; what broke is its body. Whoever reads it is told
    // now (and answers with `status`); a request that never reads its body answers as usual and
    // the raw answer below follows it.
    failBody(open.req, new ParamReadError(status === 408 ? "body-timeout" : "bad-framing", message));
    rawJsonAnswerAfterInFlight(socket, status, message, open.req.method);
    return;
  }
  rawJsonAnswerAfterInFlight(socket, status, message, methodOfFailedHead(err, c));
}
