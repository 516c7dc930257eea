import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import { errorMessage, type Logger, type Mount } from "@evb/domain";
import type { SessionLogin } from "../sessions/session-key.ts";
import type { CallerChecks } from "../http/access-control.ts";
import type { StompSocket } from "./socket-writer.ts";
import { type SessionDeps, StompSession } from "./stomp-session.ts";

export interface StompEndpointOptions {
  mounts: readonly Mount[];
  deps: SessionDeps;
  /** STOMP_MAX_FRAME_BYTES: the largest WebSocket message; a larger one closes the connection (1009). */
  maxFrameBytes: number;
  /** The caller's address as the HTTP side reads it (TRUSTED_PROXIES), for API_ALLOWED_CIDRS; null: not an address. */
  callerAddress: (req: IncomingMessage) => string | null;
  logger: Logger;
}

/** Sub-protocols answered when a client asks for one (the original offered none; browsers then refuse the socket). */
const STOMP_PROTOCOLS = ["v12.stomp", "v11.stomp", "v10.stomp"];

interface Connection {
  session: StompSession;
  lastActivity: number;
}

/**
 * STOMP over WebSocket at `<context>/stomp` of every mount (protocols.md 1, 2): text messages
 * only (a binary one closes with 1003), messages up to maxFrameBytes, no sub-protocol unless the
 * client asks for a STOMP one. The handshake passes API_ALLOWED_CIDRS (else 403) and, when it
 * carries an `Authorization` header, the same credential check as HTTP (else 401); credentials
 * may instead come in CONNECT. Every heartbeat the server pings each connection and closes the
 * ones with no activity (any message, ping or pong) for two beats.
 */
export class StompEndpoint {
  private readonly o: StompEndpointOptions;
  private readonly paths: Set<string>;
  private readonly wss: WebSocketServer;
  private readonly connections = new Map<WebSocket, Connection>();
  private readonly timer: NodeJS.Timeout;

  constructor(o: StompEndpointOptions) {
    this.o = o;
    this.paths = new Set(o.mounts.map((m) => `${m.path}/stomp`));
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: o.maxFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
      handleProtocols: (offered) => STOMP_PROTOCOLS.find((p) => offered.has(p)) ?? false,
    });
    this.timer = setInterval(() => this.sweep(), o.deps.limits.heartbeatMs);
    this.timer.unref();
  }

  /** Whether an upgrade request is for a STOMP endpoint. */
  handles(req: IncomingMessage): boolean {
    return this.paths.has((req.url ?? "").split("?")[0] as string);
  }

  /** Takes over an upgrade request for a STOMP path: refused with 403/401/503, or a session. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const identity = await admitUpgrade(this.o.deps.checks, this.o.callerAddress(req), req, socket);
    if (identity === undefined || socket.destroyed) return;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.open(ws, req, identity));
  }

  private open(ws: WebSocket, req: IncomingMessage, identity: SessionLogin | null): void {
    const peer = (req.socket.remoteAddress ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
    const session = new StompSession(this.o.deps, socketOf(ws), peer, identity);
    const c: Connection = { session, lastActivity: Date.now() };
    this.connections.set(ws, c);
    const active = () => {
      c.lastActivity = Date.now();
    };
    ws.on("message", (data: RawData, isBinary: boolean) => {
      active();
      if (isBinary) ws.close(1003, "text messages only");
      else session.receive(Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]));
    });
    ws.on("ping", active);
    ws.on("pong", active);
    ws.on("error", (err) => this.o.logger.debug({ err: errorMessage(err) }, "STOMP connection error"));
    ws.on("close", () => {
      this.connections.delete(ws);
      session.closed();
    });
  }

  /** Pings every connection; ends the ones silent for two beats (a dead peer, not a quiet one: live clients answer pings). */
  private sweep(): void {
    const silentSince = Date.now() - 2 * this.o.deps.limits.heartbeatMs;
    for (const [ws, c] of this.connections) {
      if (c.lastActivity < silentSince) ws.terminate();
      else ws.ping();
    }
  }

  /** Ends every connection (1001), waiting up to `graceMs` for them to close before cutting them. */
  async close(graceMs = 2_000): Promise<void> {
    clearInterval(this.timer);
    const all = [...this.connections.keys()];
    const gone = all.map((ws) => new Promise<void>((resolve) => ws.once("close", () => resolve())));
    for (const ws of all) ws.close(1001, "server shutting down");
    const cut = setTimeout(() => {
      for (const ws of all) ws.terminate();
    }, graceMs);
    await Promise.all(gone);
    clearTimeout(cut);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

function socketOf(ws: WebSocket): StompSocket {
  return {
    send: (text, done) => ws.send(text, done),
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

/** An HTTP answer on a socket that never became a WebSocket. */
/**
 * Who an upgrade request (STOMP or MQTT over WebSocket) comes from: the key its Authorization
 * header names when access control asks for one, null when it brings none (the protocol's own
 * CONNECT may still log in), undefined once it was refused (403 by address, 401 bad
 * credentials, 503 when the keys cannot be read).
 */
export async function admitUpgrade(
  checks: CallerChecks,
  caller: string | null,
  req: IncomingMessage,
  socket: Duplex,
): Promise<SessionLogin | null | undefined> {
  if (!checks.admits(caller)) return void refuse(socket, 403, "Forbidden");
  const authorization = req.headers.authorization;
  if (authorization === undefined || !checks.required) return null;
  const found = await checks.authorization(authorization);
  if (found.ok) return { key: found.key, authorization };
  return void refuse(socket, found.unavailable ? 503 : 401, found.unavailable ? "Service Unavailable" : "Unauthorized");
}

function refuse(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  else socket.destroy();
}
