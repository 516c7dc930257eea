import { createServer, connect as netConnect, type Server, type Socket } from "node:net";

/**
 * A TCP relay in front of a server (Redis, Postgres) that a test can break in two ways:
 * `down()` drops every connection and every new one at once (the server stopped or refusing);
 * `stall()` keeps connections open but passes nothing through (the server hung, or the network
 * silently dropping packets). `up()` relays again.
 */
export class TcpRelay {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  /** Client sockets passing nothing through for good (`silenceOpenConnections`). */
  private readonly silenced = new Set<Socket>();
  private mode: "up" | "down" | "stall" = "up";
  port = 0;

  constructor(targetHost: string, targetPort: number) {
    this.server = createServer((client) => {
      if (this.mode === "down") {
        client.destroy();
        return;
      }
      this.sockets.add(client);
      client.on("close", () => this.sockets.delete(client));
      client.on("error", () => {});
      if (this.mode === "stall") return;
      const upstream = netConnect(targetPort, targetHost);
      this.sockets.add(upstream);
      upstream.on("close", () => this.sockets.delete(upstream));
      upstream.on("error", () => {});
      client.on("data", (d) => {
        if (this.mode === "up" && !this.silenced.has(client)) upstream.write(d);
      });
      upstream.on("data", (d) => {
        if (this.mode === "up" && !this.silenced.has(client)) client.write(d);
      });
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  }

  /** A relay in front of the host and port of a URL such as redis://… or postgres://…. */
  static for(url: string, defaultPort: number): TcpRelay {
    const u = new URL(url);
    return new TcpRelay(u.hostname || "127.0.0.1", Number(u.port || defaultPort));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** The same URL, pointed at the relay. */
  via(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }

  /**
   * The connections open now pass nothing through any more and are never closed (a peer that
   * vanished without RST or FIN, whose retransmissions go nowhere); new ones relay as before.
   */
  silenceOpenConnections(): void {
    for (const s of this.sockets) this.silenced.add(s);
  }

  stall(): void {
    this.mode = "stall";
  }

  down(): void {
    this.mode = "down";
    for (const s of this.sockets) s.destroy();
  }

  /** Back to relaying; connections cut or stalled before are dropped, so clients reconnect. */
  up(): void {
    for (const s of this.sockets) s.destroy();
    this.mode = "up";
  }

  /** Each failure mode in turn for `stepMs`, then relaying again. */
  async outage(modes: readonly ("down" | "stall")[], stepMs: number): Promise<void> {
    for (const mode of modes) {
      if (mode === "down") this.down();
      else this.stall();
      await new Promise((r) => setTimeout(r, stepMs));
    }
    this.up();
  }

  close(): void {
    this.down();
    this.server.close();
  }
}
