import { connect } from "node:net";

/** Bytes to write once `delayMs` have passed since the previous stage was written. */
export interface Stage {
  bytes: Buffer;
  delayMs: number;
}

export interface Exchange {
  /** Everything the server sent, as bytes: framing is judged on lengths, not decoded text. */
  bytes: Buffer;
  /** From connect to the server's close (or to the bound). */
  ms: number;
  /** The server had neither closed nor reset when the bound passed. */
  timedOut: boolean;
  /** The server reset the connection (it may have discarded an answer not yet read). */
  reset: boolean;
}

/**
 * Writes `stages` over one TCP connection, with the pauses between them, and collects what the
 * server sends until it closes. Unlike rawExchange (test/support/raw-http.ts), which writes once,
 * this can send a head slowly, stop a body half way and keep the socket open, or half-close it,
 * and it stops writing as soon as the server gives up on the connection.
 */
export function exchange(base: string, stages: readonly Stage[], opts: { boundMs: number; halfClose?: boolean }): Promise<Exchange> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let reset = false;
    let timedOut = false;
    const socket = connect(Number(url.port), url.hostname, () => void writeStages());
    const writeStages = async () => {
      for (const stage of stages) {
        if (stage.delayMs > 0) await new Promise((r) => setTimeout(r, stage.delayMs));
        if (socket.destroyed || !socket.writable) return;
        socket.write(stage.bytes);
      }
      if (opts.halfClose && socket.writable) socket.end();
    };
    const bound = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, opts.boundMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "ECONNRESET" || err.code === "EPIPE") reset = true;
      else if (err.code === "ECONNREFUSED") reject(new Error(`gateway refused the connection: is it down? (${err.message})`));
      else reject(err);
    });
    socket.on("close", () => {
      clearTimeout(bound);
      resolve({ bytes: Buffer.concat(chunks), ms: Date.now() - started, timedOut, reset });
    });
  });
}

/** One answer's head: status, lower-cased header names, and where its body starts. */
interface AnswerHead {
  status: number;
  headers: Map<string, string>;
  bodyStart: number;
}

const CRLFCRLF = Buffer.from("\r\n\r\n");

/** The head of the answer starting at `offset`, or null when the bytes there are not a whole HTTP head. */
export function readHead(bytes: Buffer, offset: number): AnswerHead | null {
  const end = bytes.indexOf(CRLFCRLF, offset);
  if (end < 0) return null;
  const lines = bytes.subarray(offset, end).toString("latin1").split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3}) /.exec(lines[0] ?? "")?.[1];
  if (status === undefined) return null;
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status: Number(status), headers, bodyStart: end + 4 };
}

/** Bytes for a failure report: escaped, long runs cut to their ends. */
export function shown(bytes: Buffer, max = 1_200): string {
  const text = bytes.toString("latin1");
  const cut = text.length > max ? `${text.slice(0, max - 300)}…(${text.length} bytes in all)…${text.slice(-300)}` : text;
  return JSON.stringify(cut);
}
