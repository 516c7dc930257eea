/**
 * The bytes of the hostile requests (chunked bodies, multipart bodies, pipelines) and a reader
 * of a stream of HTTP/1.1 answers, for the shapes Node's own client cannot send or cannot read.
 */

/** One answer cut out of a byte stream. */
interface WireAnswer {
  status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined. */
  json: unknown;
}

export interface SplitAnswers {
  answers: WireAnswer[];
  /** Bytes after the last complete answer: a cut-off answer, or garbage. */
  leftoverBytes: number;
}

/** A request head: the request line, `headers` as given, and the blank line. */
export function requestHead(method: string, target: string, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `${method} ${target} HTTP/1.1\r\n${lines.join("")}\r\n`;
}

/**
 * `text` as a chunked body of one-byte chunks, then the last chunk: the framing that makes the
 * server handle one tiny piece of body per chunk. ASCII only, as each chunk's size is one byte.
 */
export function oneByteChunks(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error("oneByteChunks takes printable ASCII only: each chunk is declared one byte long");
  const parts: string[] = [];
  for (const ch of text) parts.push(`1\r\n${ch}\r\n`);
  parts.push("0\r\n\r\n");
  return parts.join("");
}

/** A multipart/form-data body of text `fields`; `closed: false` leaves out the closing boundary. */
export function multipartBody(boundary: string, fields: readonly (readonly [string, string])[], closed = true): string {
  const parts = fields.map(([n, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${n}"\r\n\r\n${v}\r\n`);
  return `${parts.join("")}${closed ? `--${boundary}--\r\n` : ""}`;
}

const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A chunked body starting at `from`: its text and where it ends, or undefined when cut off. */
function readChunked(buf: Buffer, from: number): { body: Buffer; end: number } | undefined {
  const pieces: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = buf.indexOf(CRLF, at);
    if (lineEnd < 0) return undefined;
    const size = Number.parseInt(buf.subarray(at, lineEnd).toString("latin1").split(";")[0] ?? "", 16);
    if (!Number.isFinite(size) || size < 0) return undefined;
    at = lineEnd + 2;
    if (size === 0) {
      // Trailers (none from this server) end with an empty line.
      const end = buf.indexOf(CRLF, at);
      if (end < 0) return undefined;
      return { body: Buffer.concat(pieces), end: end + 2 };
    }
    if (at + size + 2 > buf.length) return undefined;
    pieces.push(buf.subarray(at, at + size));
    at += size + 2;
  }
}

/**
 * Cuts a byte stream of HTTP/1.1 answers (as pipelined requests get them) into answers, by
 * Content-Length or chunked framing. An answer with neither runs to the end of the stream, as
 * a server closing the connection delimits it.
 */
export function splitAnswers(stream: string | Buffer): SplitAnswers {
  const buf = typeof stream === "string" ? Buffer.from(stream, "utf8") : stream;
  const answers: WireAnswer[] = [];
  let at = 0;
  while (at < buf.length) {
    const headEnd = buf.indexOf(HEAD_END, at);
    if (headEnd < 0) break;
    const [statusLine = "", ...lines] = buf.subarray(at, headEnd).toString("latin1").split("\r\n");
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
    if (!status) break;
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let body: Buffer;
    let end: number;
    if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      const chunked = readChunked(buf, headEnd + 4);
      if (!chunked) break;
      ({ body, end } = chunked);
    } else if (headers["content-length"] !== undefined) {
      end = headEnd + 4 + Number(headers["content-length"]);
      if (!Number.isSafeInteger(end) || end > buf.length) break;
      body = buf.subarray(headEnd + 4, end);
    } else {
      end = buf.length;
      body = buf.subarray(headEnd + 4);
    }
    const text = body.toString("utf8");
    answers.push({ status: Number(status[1]), headers, body: text, json: parseJson(text) });
    at = end;
  }
  return { answers, leftoverBytes: buf.length - at };
}
