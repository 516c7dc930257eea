import { createServer, type IncomingMessage, type RequestListener, type Server, STATUS_CODES, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { JSON_CONTENT_TYPE, sendJson } from "./replies.ts";

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
}
const connections = new WeakMap<Duplex, Connection>();

function connectionOf(socket: Duplex): Connection {
  let c = connections.get(socket);
  if (!c) {
    c = { inFlight: 0, closing: false };
    connections.set(socket, c);
  }
  return c;
}

/** Counts one answer in flight on `socket` until `res` is done (sent, or its connection gone). */
function trackAnswer(socket: Duplex, res: ServerResponse): void {
  const c = connectionOf(socket);
  c.inFlight++;
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
function rawJsonAnswerAfterInFlight(socket: Duplex, status: number, message: string): void {
  const c = connectionOf(socket);
  if (c.closing) return;
  c.closing = true;
  const answer = () => {
    if (socket.writable) rawJsonAnswer(socket, status, message);
    else socket.destroy();
  };
  if (c.inFlight === 0) answer();
  else c.deferred = answer;
}

/** One JSON answer written straight to a socket, for requests that never reach the app. */
function rawJsonAnswer(socket: Duplex, status: number, message: string): void {
  const reason = STATUS_CODES[status] ?? "Error";
  const body = JSON.stringify({ status, error: reason, message });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      `Content-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** How many Host header lines `req` carries (Node keeps only the first in `headers.host`). */
function hostHeaderCount(req: IncomingMessage): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === "host") n++;
  return n;
}

function jsonAnswer(res: ServerResponse, status: number, message: string): void {
  res.setHeader("Connection", "close");
  sendJson(res, status, { status, error: STATUS_CODES[status] ?? "Error", message });
}

/**
 * The gateway's HTTP server. Whatever Node would answer on its own, with an empty body or by
 * dropping the connection, gets a JSON answer that says what was wrong and what to do: a head
 * above MAX_REQUEST_HEAD_BYTES (431) or with more than MAX_HEADER_LINES lines (431), malformed
 * HTTP (400), an HTTP/1.1 request without Host or with more than one (400, RFC 9112 3.2), an
 * `Expect` other than 100-continue (417) and CONNECT, which no operation serves (405). The raw
 * answers (malformed HTTP, CONNECT) wait for the answers still in flight on a pipelined
 * connection, then close it.
 */
export function createGatewayServer(app: RequestListener): Server {
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    trackAnswer(req.socket, res);
    if (req.rawHeaders.length / 2 > MAX_HEADER_LINES) {
      jsonAnswer(res, 431, `more than ${MAX_HEADER_LINES} header lines; send fewer headers`);
    } else if (req.httpVersion === "1.1" && req.headers.host === undefined) {
      jsonAnswer(res, 400, "an HTTP/1.1 request needs a Host header");
    } else if (hostHeaderCount(req) > 1) {
      jsonAnswer(res, 400, "more than one Host header; send exactly one");
    } else {
      app(req, res);
    }
  };
  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES, requireHostHeader: false }, listener);
  server.maxHeadersCount = 0;
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    trackAnswer(req.socket, res);
    jsonAnswer(res, 417, "the only Expect value served is 100-continue; send the request without it");
  });
  server.on("connect", (_req: IncomingMessage, socket: Duplex) => {
    rawJsonAnswerAfterInFlight(socket, 405, "CONNECT is not served: this is not a proxy; call an operation with GET or POST");
  });
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    if (err.code === "HPE_HEADER_OVERFLOW") {
      rawJsonAnswerAfterInFlight(
        socket,
        431,
        `the request line and headers exceed ${MAX_REQUEST_HEAD_BYTES} bytes; send large parameters (content) as a POST form body`,
      );
    } else {
      rawJsonAnswerAfterInFlight(socket, 400, `malformed HTTP request (${err.code ?? err.message})`);
    }
  });
  return server;
}
