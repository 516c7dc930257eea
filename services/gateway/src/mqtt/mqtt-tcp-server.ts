import { createServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { errorMessage } from "@evb/domain";
import type { ApiKeyRecord } from "@evb/storage";
import type { MqttTls } from "../tls/gateway-tls.ts";
import type { StompSocket } from "../stomp/socket-writer.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import { MqttConnection } from "./mqtt-connection.ts";

/** How long a closing connection may take to flush what was written before it is cut, ms. */
const END_GRACE_MS = 2_000;
/** TCP keep-alive probes start after this much silence: a peer gone without a FIN is noticed even without an MQTT keep-alive. */
const TCP_KEEPALIVE_MS = 60_000;

/** An IPv4 peer as `a.b.c.d`, not `::ffff:a.b.c.d`. */
export function peerAddress(remote: string | undefined): string {
  return (remote ?? "").replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "");
}

/**
 * MQTT over plain TCP on MQTT_PORT (protocols.md 1): one MqttConnection per socket. A caller
 * outside API_ALLOWED_CIDRS is cut at once; credentials come in CONNECT. With `tls`, MQTT over TLS
 * on MQTT_TLS_PORT: the allow-list is checked before the handshake, a client certificate may sign
 * the connection in (tls/client-certificate.ts), and reloads of the certificate reach it.
 */
export class MqttTcpServer {
  private readonly deps: MqttDeps;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** Sessions still ending (their state being stored): close() waits for them. */
  private readonly ending = new Set<Promise<void>>();

  constructor(deps: MqttDeps, tls?: MqttTls) {
    this.deps = deps;
    if (!tls) {
      this.server = createServer((socket) => this.accept(socket, null));
      return;
    }
    const server = createTlsServer(tls.options, (socket) => void this.acceptTls(socket, tls));
    server.on("connection", (socket: Socket) => {
      if (!deps.checks.admits(peerAddress(socket.remoteAddress))) socket.destroy();
    });
    tls.attach(server);
    this.server = server;
  }

  /** Listens; resolves with the port (MQTT_PORT 0 picks a free one). */
  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    const address = this.server.address();
    return typeof address === "object" && address ? address.port : port;
  }

  /** A finished handshake: its certificate's identity first (a key lookup), then an ordinary connection. */
  private async acceptTls(socket: TLSSocket, tls: MqttTls): Promise<void> {
    this.sockets.add(socket);
    const identity = await tls.identify(socket);
    this.sockets.delete(socket);
    if (identity === "refused") socket.destroy();
    else if (!socket.destroyed) this.accept(socket, identity);
  }

  private accept(socket: Socket, identity: { key: ApiKeyRecord | null } | null): void {
    const peer = peerAddress(socket.remoteAddress);
    if (!this.deps.checks.admits(peer)) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
    this.sockets.add(socket);
    const connection = new MqttConnection(this.deps, socketOf(socket), peer, identity);
    socket.on("data", (bytes: Buffer) => connection.receive(bytes));
    socket.on("error", (err) => this.deps.logger.debug({ err: errorMessage(err) }, "MQTT TCP connection error"));
    socket.on("close", () => {
      this.sockets.delete(socket);
      const ended = connection.closed().finally(() => this.ending.delete(ended));
      this.ending.add(ended);
    });
  }

  /** Stops listening and ends every connection, cutting the ones still open after the grace. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.end();
    const cut = setTimeout(() => {
      for (const s of this.sockets) s.destroy();
    }, END_GRACE_MS);
    await closed;
    clearTimeout(cut);
    await Promise.all(this.ending);
  }
}

function socketOf(socket: Socket): StompSocket {
  return {
    send: (data, done) => {
      socket.write(data, (err) => done(err ?? undefined));
    },
    get bufferedAmount() {
      return socket.writableLength;
    },
    get isOpen() {
      return !socket.destroyed && socket.writable;
    },
    close: () => {
      socket.end();
      setTimeout(() => socket.destroy(), END_GRACE_MS).unref();
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  };
}
