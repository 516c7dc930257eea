import { createServer, type RequestListener, type Server } from "node:http";
import type { Duplex } from "node:stream";
import { JSON_CONTENT_TYPE } from "./replies.ts";

/**
 * Room for the request line and headers: a GET carrying the largest content the interface
 * accepts (10240 characters, up to 12 bytes each when percent-encoded, plus extensions) fits,
 * so such a publish is answered by the broker's own rules rather than Node's 16 KiB default.
 */
const MAX_REQUEST_HEAD_BYTES = 256 * 1024;

/**
 * The gateway's HTTP server. A request the HTTP parser cannot take (a head above
 * MAX_REQUEST_HEAD_BYTES, malformed HTTP) gets a JSON answer that says what was wrong and
 * what to do, in place of Node's empty 400/431.
 */
export function createGatewayServer(app: RequestListener): Server {
  const server = createServer({ maxHeaderSize: MAX_REQUEST_HEAD_BYTES }, app);
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === "HPE_HEADER_OVERFLOW";
    const status = tooLarge ? 431 : 400;
    const reason = tooLarge ? "Request Header Fields Too Large" : "Bad Request";
    const body = JSON.stringify({
      status,
      error: reason,
      message: tooLarge
        ? `the request line and headers exceed ${MAX_REQUEST_HEAD_BYTES} bytes; send large parameters (content) as a POST form body`
        : `malformed HTTP request (${err.code ?? err.message})`,
    });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\n` +
        `Content-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
