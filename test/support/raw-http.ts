import { type IncomingMessage, request } from "node:http";
import { connect } from "node:net";
import type { CallResult } from "./http.ts";

export interface RawRequest {
  method?: string;
  /** Sent verbatim: nothing re-encodes or normalises it (malformed percent-encoding stays malformed). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Hang bound: no answer within this many ms fails the call (default 30 s). */
  timeoutMs?: number;
}

/**
 * One HTTP request over a real socket with full control of method, path, headers and body
 * bytes, for the protocol edge cases `call()` deliberately cannot produce.
 */
export function rawCall(base: string, req: RawRequest): Promise<CallResult> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const r = request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method ?? "GET",
        path: req.path,
        headers: { ...(req.body !== undefined ? { "content-length": String(Buffer.byteLength(req.body)) } : {}), ...req.headers },
        timeout: req.timeoutMs ?? 30_000,
      },
      (res) => readReply(res).then(resolve, reject),
    );
    r.on("timeout", () =>
      r.destroy(new Error(`no answer to ${req.method ?? "GET"} ${req.path.slice(0, 200)} within ${req.timeoutMs ?? 30_000} ms`)),
    );
    r.on("error", reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

export interface RawExchange {
  /** The status code of the first response line, 0 when the server closed without answering. */
  status: number;
  /** Everything the server sent, head and body, until it closed the connection. */
  text: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
  /** The server reset the connection (e.g. it answered and closed while the request was still being sent). */
  reset: boolean;
}

/**
 * Writes `bytes` to a fresh TCP connection and collects everything the server sends until it
 * closes (or `timeoutMs` passes), for requests Node's own HTTP client refuses to produce:
 * no Host header, CONNECT, odd Expect values, broken framing.
 */
export function rawExchange(base: string, bytes: string | Buffer, timeoutMs = 30_000): Promise<RawExchange> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let reset = false;
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no end of answer within ${timeoutMs} ms`)));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNRESET" || err.code === "EPIPE") reset = true;
      else reject(err);
    });
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      const body = text.slice(text.indexOf("\r\n\r\n") + 4);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      resolve({ status, text, json, reset });
    });
  });
}

/** Reads a whole reply: status, content type, text, and the JSON when the text parses. */
export function readReply(res: IncomingMessage): Promise<CallResult & { headers: IncomingMessage["headers"] }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), text, json, headers: res.headers });
    });
    res.on("error", reject);
  });
}
