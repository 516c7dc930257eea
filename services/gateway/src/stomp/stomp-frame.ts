/**
 * The STOMP frame codec as the original spoke it over WebSocket text messages (protocols.md 2.1):
 * several frames per message, EOL-only heart-beats between them, STOMP 1.2 header escaping on
 * every inbound frame (CONNECT included) and on every outbound frame but CONNECTED, the first of
 * repeated headers winning, a body bounded by `content-length` or by the first NUL. Pure.
 */

/** One frame. Headers keep their order and repeats; `header()` gives the first value. */
export interface StompFrame {
  command: string;
  headers: ReadonlyArray<readonly [string, string]>;
  body: string;
}

/** The commands a client may send; anything else is malformed (protocols.md 2.2). */
const CLIENT_COMMANDS: ReadonlySet<string> = new Set([
  "CONNECT",
  "STOMP",
  "SEND",
  "SUBSCRIBE",
  "UNSUBSCRIBE",
  "ACK",
  "NACK",
  "BEGIN",
  "COMMIT",
  "ABORT",
  "DISCONNECT",
]);

/** Most header lines one frame may carry: far above any client's, low enough that a frame of empty lines costs nothing. */
export const MAX_HEADERS_PER_FRAME = 256;

/** What one text message held: the frames read, and why reading stopped early (the rest is not read). */
export interface DecodedMessage {
  frames: StompFrame[];
  error?: string;
}

const NUL = 0;
const LF = 10;
const CR = 13;

/** The first value of `name`, or undefined (a repeated header's first value wins). */
export function header(frame: StompFrame, name: string): string | undefined {
  for (const [k, v] of frame.headers) if (k === name) return v;
  return undefined;
}

/** STOMP 1.2 unescaping of a header name or value; null on an escape STOMP does not define. */
export function unescapeHeader(raw: string): string | null {
  if (!raw.includes("\\")) return raw;
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c !== "\\") {
      out += c;
      continue;
    }
    const next = raw[++i];
    if (next === "\\") out += "\\";
    else if (next === "c") out += ":";
    else if (next === "n") out += "\n";
    else if (next === "r") out += "\r";
    else return null;
  }
  return out;
}

/** STOMP 1.2 escaping of a header name or value. */
export function escapeHeader(value: string): string {
  return /[\\:\n\r]/.test(value) ? value.replace(/[\\:\n\r]/g, (c) => ESCAPES[c] as string) : value;
}
const ESCAPES: Record<string, string> = { "\\": "\\\\", ":": "\\c", "\n": "\\n", "\r": "\\r" };

/** One frame as a text message's text. CONNECTED is written unescaped, as the original did. */
export function encodeFrame(command: string, headers: ReadonlyArray<readonly [string, string]>, body = ""): string {
  const escaped = command !== "CONNECTED";
  let text = `${command}\n`;
  for (const [k, v] of headers) text += escaped ? `${escapeHeader(k)}:${escapeHeader(v)}\n` : `${k}:${v}\n`;
  return `${text}\n${body}\u0000`;
}

/** Index just past the line starting at `from` (its LF), and the line without its EOL; null when there is no LF. */
function readLine(buf: Buffer, from: number): { line: string; next: number } | null {
  const lf = buf.indexOf(LF, from);
  if (lf < 0) return null;
  const end = lf > from && buf[lf - 1] === CR ? lf - 1 : lf;
  return { line: buf.toString("utf8", from, end), next: lf + 1 };
}

/** Headers from `from` up to the empty line, unescaped; or why they are malformed. */
function readHeaders(buf: Buffer, from: number): { headers: [string, string][]; next: number } | { error: string } {
  const headers: [string, string][] = [];
  let at = from;
  for (;;) {
    const l = readLine(buf, at);
    if (!l) return { error: "frame ends inside its headers" };
    at = l.next;
    if (l.line === "") return { headers, next: at };
    if (l.line.includes("\r")) return { error: "a bare CR in a header line" };
    const colon = l.line.indexOf(":");
    if (colon < 0) return { error: `header line without a colon: ${l.line.slice(0, 40)}` };
    const name = unescapeHeader(l.line.slice(0, colon));
    const value = unescapeHeader(l.line.slice(colon + 1));
    if (name === null || value === null) return { error: "an undefined escape sequence in a header" };
    if (headers.length >= MAX_HEADERS_PER_FRAME) return { error: `more than ${MAX_HEADERS_PER_FRAME} headers in a frame` };
    headers.push([name, value]);
  }
}

/** The body from `from`: `content-length` bytes then a NUL, or up to the first NUL. */
function readBody(buf: Buffer, from: number, length: string | undefined): { body: string; next: number } | { error: string } {
  if (length !== undefined) {
    if (!/^\d{1,9}$/.test(length.trim())) return { error: `content-length is not a byte count: ${length.slice(0, 20)}` };
    const end = from + Number(length.trim());
    if (end >= buf.length || buf[end] !== NUL) return { error: "the body is not followed by NUL at its content-length" };
    return { body: buf.toString("utf8", from, end), next: end + 1 };
  }
  const nul = buf.indexOf(NUL, from);
  if (nul < 0) return { error: "frame not terminated by NUL" };
  return { body: buf.toString("utf8", from, nul), next: nul + 1 };
}

/** Frames read from a message, where reading stopped, and why it stopped early (the rest is not read). */
export interface FrameRun extends DecodedMessage {
  /** The offset after the last frame read (and the heart-beat EOLs after it). */
  next: number;
}

/**
 * Up to `max` frames of one WebSocket text message from `from`, in order. EOLs between frames are
 * heart-beats and skipped. Reading stops at the first malformed frame (unknown command, bad
 * header, bad escape, missing NUL) with `error` set; the frames before it are returned.
 */
export function readFrames(buf: Buffer, from: number, max: number): FrameRun {
  const frames: StompFrame[] = [];
  let at = from;
  for (;;) {
    while (at < buf.length && (buf[at] === LF || (buf[at] === CR && buf[at + 1] === LF))) at += buf[at] === CR ? 2 : 1;
    if (at >= buf.length || frames.length >= max) return { frames, next: at };
    const first = readLine(buf, at);
    if (!first) return { frames, next: at, error: "frame without a command line" };
    const command = first.line;
    if (!CLIENT_COMMANDS.has(command)) return { frames, next: at, error: `unknown command: ${command.slice(0, 40)}` };
    const h = readHeaders(buf, first.next);
    if ("error" in h) return { frames, next: at, error: h.error };
    const length = h.headers.find(([k]) => k === "content-length")?.[1];
    const b = readBody(buf, h.next, length);
    if ("error" in b) return { frames, next: at, error: b.error };
    frames.push({ command, headers: h.headers, body: b.body });
    at = b.next;
  }
}
