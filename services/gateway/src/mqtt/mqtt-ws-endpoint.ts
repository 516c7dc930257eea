import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import { errorMessage, type Mount } from "@evb/domain";
import type { SessionLogin } from "../sessions/session-key.ts";
import type { UpgradeHandler } from "../http/server.ts";
import type { StompSocket } from "../stomp/socket-writer.ts";
import { admitUpgrade } from "../stomp/stomp-endpoint.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import { MqttConnection } from "./mqtt-connection.ts";
import { peerAddress } from "./mqtt-tcp-server.ts";

export interface MqttWsEndpointOptions {
  mounts: readonly Mount[];
  deps: MqttDeps;
  /** The caller's address as the HTTP side reads it (TRUSTED_PROXIES), for API_ALLOWED_CIDRS; null: not an address. */
  callerAddress: (req: IncomingMessage) => string | null;
}

/** The sub-protocols of MQTT over WebSocket: `mqtt` (3.1.1 and 5), `mqttv3.1` (3.1); chosen case-insensitively. */
const MQTT_PROTOCOL = /^mqtt(v3\.1)?$/i;

/**
 * MQTT over WebSocket at `<context>/mqtt` of every mount (protocols.md 1, 3.1): binary messages
 * read as one byte stream (a packet may span messages, a message may hold several; a text
 * message closes with 1003), sub-protocol `mqtt` when the client offers it. The handshake passes
 * API_ALLOWED_CIDRS (else 403) and, when it carries an `Authorization` header, the same
 * credential check as HTTP (else 401); credentials may instead come in CONNECT.
 */
export class MqttWsEndpoint implements UpgradeHandler {
  private readonly o: MqttWsEndpointOptions;
  private readonly paths: Set<string>;
  private readonly wss: WebSocketServer;
  private readonly open = new Set<WebSocket>();
  /** Sessions still ending (their state being stored): close() waits for them. */
  private readonly ending = new Set<Promise<void>>();

  constructor(o: MqttWsEndpointOptions) {
    this.o = o;
    this.paths = new Set(o.mounts.map((m) => `${m.path}/mqtt`));
    this.wss = new WebSocketServer({
      noServer: true,
      // Packets are limited by MQTT_MAX_PACKET_BYTES as they are read; a message carries at most one more packet's header.
      maxPayload: o.deps.limits.maxPacketBytes + 8,
      perMessageDeflate: false,
      clientTracking: false,
      handleProtocols: (offered) => [...offered].find((p) => MQTT_PROTOCOL.test(p)) ?? false,
    });
  }

  handles(req: IncomingMessage): boolean {
    return this.paths.has((req.url ?? "").split("?")[0] as string);
  }

  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const identity = await admitUpgrade(this.o.deps.checks, this.o.callerAddress(req), req, socket);
    if (identity === undefined || socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req, identity));
  }

  private accept(ws: WebSocket, req: IncomingMessage, identity: SessionLogin | null): void {
    const connection = new MqttConnection(this.o.deps, socketOf(ws), peerAddress(req.socket.remoteAddress), identity);
    this.open.add(ws);
    ws.on("message", (data: RawData, isBinary: boolean) => {
      if (!isBinary) ws.close(1003, "binary messages only");
      else connection.receive(Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]));
    });
    ws.on("error", (err) => this.o.deps.logger.debug({ err: errorMessage(err) }, "MQTT WebSocket error"));
    ws.on("close", () => {
      this.open.delete(ws);
      const ended = connection.closed().finally(() => this.ending.delete(ended));
      this.ending.add(ended);
    });
  }

  /** Ends every connection (1001), waiting up to `graceMs` before cutting them. */
  async close(graceMs = 2_000): Promise<void> {
    const all = [...this.open];
    const gone = all.map((ws) => new Promise<void>((resolve) => ws.once("close", () => resolve())));
    for (const ws of all) ws.close(1001, "server shutting down");
    const cut = setTimeout(() => {
      for (const ws of all) ws.terminate();
    }, graceMs);
    await Promise.all(gone);
    clearTimeout(cut);
    await Promise.all(this.ending);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

function socketOf(ws: WebSocket): StompSocket {
  return {
    send: (data, done) => ws.send(data, { binary: true }, done),
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    get isOpen() {
      return ws.readyState === ws.OPEN;
    },
    close: (code, reason) => ws.close(code, reason),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
  };
}
