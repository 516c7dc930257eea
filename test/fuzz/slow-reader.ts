import { connect } from "node:net";
import WebSocket from "ws";
import { vitals } from "./gateway-watch.ts";

/** A client connection that writes and never reads what the server sends. */
export interface DeafClient {
  write(bytes: Buffer): void;
  /** Bytes written and not yet taken by the kernel. */
  buffered(): number;
  /** The connection is gone (the server closed or reset it). */
  gone(): boolean;
  destroy(): void;
}

export interface FloodOutcome {
  /** The server stopped reading: nothing more went out for `stallMs`. */
  stalled: boolean;
  /** The server closed the connection. */
  closed: boolean;
  /** Bytes the kernel took from the client. */
  sentBytes: number;
  /** The gateway's resident memory, most above its size before the flood (and while it settled). */
  peakGrowthBytes: number;
  ms: number;
}

/** Client-side bytes kept queued: past them the client waits for the kernel to take more. */
const CLIENT_QUEUE_BYTES = 4 * 1024 * 1024;

/**
 * Writes `chunk` over `client` as fast as the kernel takes it, reading nothing, until the server
 * stops reading (nothing taken for `stallMs`), closes, or its memory grows past `limitBytes`, or
 * `maxMs` pass; then, still reading nothing, watches the memory for `settleMs` more: a server
 * that is merely slower than the client goes on working through what it took, and grows. The
 * gateway's resident memory is scraped from its /metrics every 250 ms.
 */
export async function floodWithoutReading(
  base: string,
  client: DeafClient,
  chunk: Buffer,
  o: { stallMs: number; settleMs: number; maxMs: number; limitBytes: number },
): Promise<FloodOutcome> {
  const started = Date.now();
  const before = (await vitals(base)).rssBytes;
  let written = 0;
  let peak = 0;
  let lastTaken = Date.now();
  let lastBuffered = 0;
  let nextScrape = 0;
  for (;;) {
    const now = Date.now();
    if (client.gone()) return outcome(false, true);
    if (now >= nextScrape) {
      peak = Math.max(peak, (await vitals(base)).rssBytes - before);
      nextScrape = Date.now() + 250;
      if (peak > o.limitBytes || now - started > o.maxMs) return outcome(false, false);
    }
    const buffered = client.buffered();
    if (buffered < lastBuffered || buffered < CLIENT_QUEUE_BYTES) lastTaken = now;
    lastBuffered = buffered;
    if (buffered < CLIENT_QUEUE_BYTES) {
      client.write(chunk);
      written += chunk.length;
    } else if (now - lastTaken > o.stallMs) {
      return outcome(true, false);
    } else {
      await new Promise((r) => setTimeout(r, 10));
    }
    if (written % (chunk.length * 16) === 0) await new Promise((r) => setImmediate(r));
  }

  async function outcome(stalled: boolean, closed: boolean): Promise<FloodOutcome> {
    const sentBytes = written - client.buffered();
    const until = Date.now() + (stalled ? o.settleMs : 0);
    while (Date.now() < until && peak <= o.limitBytes) {
      await new Promise((r) => setTimeout(r, 250));
      peak = Math.max(peak, (await vitals(base)).rssBytes - before);
    }
    client.destroy();
    return { stalled, closed, sentBytes, peakGrowthBytes: peak, ms: Date.now() - started };
  }
}

/** A STOMP (or MQTT) WebSocket that never reads: paused as soon as it opens. */
export async function deafWebSocket(url: string, binary: boolean, protocols: string[] = []): Promise<DeafClient> {
  const ws = new WebSocket(url, protocols);
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.pause();
  ws.on("error", () => {});
  let gone = false;
  ws.on("close", () => {
    gone = true;
  });
  return {
    write: (b) => ws.send(b, { binary }, () => {}),
    buffered: () => ws.bufferedAmount,
    gone: () => gone || ws.readyState === WebSocket.CLOSED,
    destroy: () => ws.terminate(),
  };
}

/** A TCP connection that never reads, having written `first` (an MQTT CONNECT). */
export async function deafSocket(port: number, first: Buffer): Promise<DeafClient> {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", () => resolve());
    socket.once("error", reject);
  });
  socket.pause();
  socket.on("error", () => {});
  socket.write(first);
  return {
    write: (b) => socket.write(b),
    buffered: () => socket.writableLength,
    gone: () => socket.destroyed,
    destroy: () => socket.destroy(),
  };
}
