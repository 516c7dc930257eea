import { Client, type IMessage, type StompHeaders } from "@stomp/stompjs";
import WebSocket from "ws";

/** `ws://host:port<context>/stomp` of a gateway base URL (`http://host:port`). */
export function stompUrl(base: string, context = "/event-broker"): string {
  return `${base.replace(/^http/, "ws")}${context}/stomp`;
}

/** A frame as a test reads it: command, headers in order (repeats kept), body. */
export interface RawFrame {
  command: string;
  headers: [string, string][];
  body: string;
}

/** The first value of a header. */
export function hdr(f: RawFrame, name: string): string | undefined {
  return f.headers.find(([k]) => k === name)?.[1];
}

/**
 * Frames of one text message, read independently of the gateway's codec: split at NUL (the test
 * bodies hold none), EOL-only heart-beats skipped, header values unescaped (STOMP 1.2).
 */
function parseMessage(text: string): RawFrame[] {
  const out: RawFrame[] = [];
  for (const chunk of text.split("\u0000")) {
    const trimmed = chunk.replace(/^(\r?\n)+/, "");
    if (trimmed === "") continue;
    const blank = trimmed.indexOf("\n\n");
    const head = blank < 0 ? trimmed : trimmed.slice(0, blank);
    const [command, ...lines] = head.split("\n");
    const unescaped = (s: string) => s.replace(/\\(.)/g, (_, c: string) => ({ c: ":", n: "\n", r: "\r", "\\": "\\" })[c] ?? `\\${c}`);
    const headers = lines.map((l): [string, string] => {
      const i = l.indexOf(":");
      return [unescaped(l.slice(0, i)), command === "CONNECTED" ? l.slice(i + 1) : unescaped(l.slice(i + 1))];
    });
    out.push({ command: command as string, headers, body: blank < 0 ? "" : trimmed.slice(blank + 2) });
  }
  return out;
}

/** A frame's text: command, `name:value` lines (escaped when asked), a blank line, the body and NUL. */
export function frame(command: string, headers: Record<string, string> = {}, body = ""): string {
  return `${command}\n${Object.entries(headers)
    .map(([k, v]) => `${k}:${v}\n`)
    .join("")}\n${body}\u0000`;
}

/**
 * A plain WebSocket speaking STOMP by hand, for the exact frames of protocols.md §7: it sends
 * text as given and collects every frame received, with the close code.
 */
export class RawStomp {
  readonly ws: WebSocket;
  readonly frames: RawFrame[] = [];
  closeCode: number | null = null;
  private waiters: (() => void)[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary) this.frames.push(...parseMessage(data.toString("utf8")));
      this.poke();
    });
    ws.on("close", (code: number) => {
      this.closeCode = code;
      this.poke();
    });
    ws.on("error", () => this.poke());
  }

  static async open(url: string, opts: WebSocket.ClientOptions & { protocols?: string[] } = {}): Promise<RawStomp> {
    const ws = new WebSocket(url, opts.protocols ?? [], opts);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
    });
    return new RawStomp(ws);
  }

  send(text: string): void {
    this.ws.send(text);
  }

  private poke(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until `pred` holds over the frames received (or the socket closed), at most `ms`. */
  async until(pred: (frames: RawFrame[]) => boolean, ms = 15_000): Promise<RawFrame[]> {
    const deadline = Date.now() + ms;
    while (!pred(this.frames)) {
      if (this.closeCode !== null) throw new Error(`closed (${this.closeCode}) before the frames came: ${JSON.stringify(this.frames)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; frames so far: ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames;
  }

  /** The first reply (any frame but MESSAGE) past the `n` frames already seen. */
  async nth(n: number, ms?: number): Promise<RawFrame> {
    const reply = (f: RawFrame[]) => f.slice(n).find((x) => x.command !== "MESSAGE");
    return reply(await this.until((f) => reply(f) !== undefined, ms)) as RawFrame;
  }

  /** Waits for the socket to close; its close code. */
  async closed(ms = 15_000): Promise<number> {
    const deadline = Date.now() + ms;
    while (this.closeCode === null) {
      if (Date.now() > deadline) throw new Error("the server did not close the connection");
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.closeCode;
  }

  /** Sends CONNECT as the Java client does and waits for the reply. */
  async connect(extra: Record<string, string> = {}): Promise<RawFrame> {
    const n = this.frames.length;
    this.send(frame("CONNECT", { version: "1.1", "accept-version": "1.1", "heart-beat": "30,0", ...extra }));
    return this.nth(n);
  }

  close(): void {
    this.ws.terminate();
  }
}

/** A @stomp/stompjs client over `ws`, connected; the caller deactivates it. */
export async function stompClient(url: string, connectHeaders: StompHeaders = {}): Promise<Client> {
  const client = new Client({
    webSocketFactory: () => new WebSocket(url),
    connectHeaders,
    reconnectDelay: 0,
    heartbeatIncoming: 0,
    heartbeatOutgoing: 0,
    debug: () => {},
  });
  await new Promise<void>((resolve, reject) => {
    client.onConnect = () => resolve();
    client.onStompError = (f) => reject(new Error(`STOMP ERROR: ${f.headers.message}`));
    client.onWebSocketError = () => reject(new Error("WebSocket error"));
    client.activate();
  });
  return client;
}

/** Collects a stompjs subscription's messages. */
export class Inbox {
  readonly messages: IMessage[] = [];
  readonly take = (m: IMessage): void => {
    this.messages.push(m);
  };

  /** Waits for at least `n` messages, at most `ms`. */
  async count(n: number, ms = 20_000): Promise<IMessage[]> {
    const deadline = Date.now() + ms;
    while (this.messages.length < n) {
      if (Date.now() > deadline) throw new Error(`${this.messages.length} of ${n} messages arrived`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.messages;
  }
}
