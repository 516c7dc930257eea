import WebSocket from "ws";

/** One WebSocket message a case sends: STOMP text (any bytes, valid UTF-8 or not) or a binary message. */
export interface WsMessage {
  bytes: Buffer;
  binary: boolean;
}

/** What the server did with a case's messages. */
export interface WsExchange {
  /** Every message the server sent, as text (STOMP) or bytes (MQTT), in order. */
  messages: Buffer[];
  /** The close code the server sent; null when the bound passed first (or the socket was cut without one). */
  closeCode: number | null;
  timedOut: boolean;
  ms: number;
}

/**
 * Opens a WebSocket to `url`, writes `messages` one after another as fast as the socket takes
 * them, and collects what the server sends until it closes (or `boundMs` passes, when the
 * socket is cut). Sending stops once the server has closed: its later messages are never read.
 */
export function wsExchange(
  url: string,
  messages: readonly WsMessage[],
  opts: { boundMs: number; protocols?: string[] },
): Promise<WsExchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const ws = new WebSocket(url, opts.protocols ?? [], { maxPayload: 64 * 1024 * 1024 });
    const got: Buffer[] = [];
    let closeCode: number | null = null;
    let timedOut = false;
    const bound = setTimeout(() => {
      timedOut = true;
      ws.terminate();
    }, opts.boundMs);
    ws.on("open", () => {
      for (const m of messages) {
        if (ws.readyState !== WebSocket.OPEN) break;
        ws.send(m.bytes, { binary: m.binary }, () => {});
      }
    });
    ws.on("message", (data: Buffer) => got.push(Buffer.from(data)));
    ws.on("unexpected-response", (_req, res) => {
      clearTimeout(bound);
      reject(new Error(`handshake answered ${res.statusCode}`));
    });
    ws.on("error", () => {});
    ws.on("close", (code: number) => {
      clearTimeout(bound);
      // 1005 (no status) and 1006 (no close frame) are no code the server chose.
      closeCode = code === 1005 || code === 1006 ? null : code;
      resolve({ messages: got, closeCode, timedOut, ms: Date.now() - started });
    });
  });
}

/** A frame as the suite reads the server's: command, headers (unescaped), body. */
export interface ServerFrame {
  command: string;
  headers: Map<string, string>;
}

/**
 * The frames of the server's text messages, read without the gateway's codec: NUL ends a frame
 * (the server's bodies here hold none), EOL-only heart-beats are skipped; null when a message
 * holds bytes that are no frame.
 */
export function serverFrames(messages: readonly Buffer[]): ServerFrame[] | null {
  const out: ServerFrame[] = [];
  for (const m of messages) {
    const text = m.toString("utf8");
    if (!text.endsWith("\u0000") && text.replace(/[\r\n]/g, "") !== "") return null;
    for (const chunk of text.split("\u0000").slice(0, -1)) {
      const head = chunk.replace(/^(\r?\n)+/, "").split("\n\n")[0] ?? "";
      const [command, ...lines] = head.split("\n");
      if (!command || !/^[A-Z]+$/.test(command)) return null;
      const headers = new Map<string, string>();
      for (const l of lines) {
        const i = l.indexOf(":");
        if (i < 0) return null;
        const name = l.slice(0, i);
        if (!headers.has(name)) headers.set(name, unescapeValue(l.slice(i + 1)));
      }
      out.push({ command, headers });
    }
  }
  return out;
}

function unescapeValue(s: string): string {
  return s.replace(/\\(.)/g, (_, c: string) => ({ c: ":", n: "\n", r: "\r", "\\": "\\" })[c] ?? `\\${c}`);
}
