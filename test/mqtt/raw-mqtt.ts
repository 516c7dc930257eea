import { connect, type Socket } from "node:net";
import { type IClientOptions, connect as mqttConnect, type MqttClient } from "mqtt";
import { generate, type IConnackPacket, type IPublishPacket, type Packet, parser } from "mqtt-packet";
import { freePort } from "@evb/devstack";

/** The gateway env of a suite that speaks MQTT over TCP, on a port free now. */
export async function mqttEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  return { MQTT_PORT: String(await freePort()), STOMP_POLL_MS: "500", ...extra };
}

/** `ws://host:port<context>/mqtt` of a gateway base URL (`http://host:port`). */
export function mqttWsUrl(base: string, context = "/event-broker"): string {
  return `${base.replace(/^http/, "ws")}${context}/mqtt`;
}

/**
 * A TCP socket speaking MQTT by hand (packets built and read with mqtt-packet, the gateway's codec
 * being what is tested only through its answers): sends packets or raw bytes, collects every
 * packet received and whether the server closed.
 */
export class RawMqtt {
  readonly packets: Packet[] = [];
  closed = false;
  private readonly socket: Socket;
  private readonly version: 4 | 5;

  private constructor(socket: Socket, version: 4 | 5) {
    this.socket = socket;
    this.version = version;
    const p = parser({ protocolVersion: version });
    p.on("packet", (packet: Packet) => this.packets.push(packet));
    p.on("error", () => socket.destroy());
    socket.on("data", (b: Buffer) => p.parse(b));
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("error", () => {});
  }

  /** `localAddress`: the address it connects from (every 127/8 address is loopback: another caller). */
  static async open(port: number, version: 4 | 5 = 4, localAddress?: string): Promise<RawMqtt> {
    const socket = connect({ port, host: "127.0.0.1", ...(localAddress ? { localAddress } : {}) });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    return new RawMqtt(socket, version);
  }

  send(packet: Packet): void {
    this.socket.write(generate(packet, { protocolVersion: this.version }));
  }

  sendBytes(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** CONNECT and its CONNACK. */
  async connect(fields: Partial<Extract<Packet, { cmd: "connect" }>> = {}): Promise<Packet> {
    const n = this.packets.length;
    this.send({ cmd: "connect", protocolId: "MQTT", protocolVersion: this.version, clean: true, clientId: "", keepalive: 0, ...fields });
    return this.next(n);
  }

  /** The first packet past the `n` already received. */
  async next(n: number, ms = 10_000): Promise<Packet> {
    await this.until(() => this.packets.length > n, ms);
    return this.packets[n] as Packet;
  }

  /** Waits until `pred` holds (or throws when the socket closed first, or after `ms`). */
  async until(pred: () => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (this.closed) throw new Error(`closed; packets so far: ${JSON.stringify(this.packets.map((p) => p.cmd))}`);
      if (Date.now() > deadline) throw new Error(`timed out; packets so far: ${JSON.stringify(this.packets.map((p) => p.cmd))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Waits for the server to close the connection; false when it is still open after `ms`. */
  async closedWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.closed;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** One message an mqtt.js client received. */
export interface Received {
  topic: string;
  payload: Buffer;
  packet: IPublishPacket;
}

/** What an mqtt.js client received, attached before its CONNACK so that nothing a resumed session sends at once is missed. */
export class MessageLog {
  readonly messages: Received[] = [];
  connack: IConnackPacket | undefined;

  constructor(client: MqttClient) {
    client.on("message", (topic, payload, packet) => this.messages.push({ topic, payload, packet }));
    client.on("connect", (p) => {
      this.connack = p;
    });
  }

  /** Waits for at least `n` messages, at most `ms`. */
  async count(n: number, ms = 20_000): Promise<Received[]> {
    const deadline = Date.now() + ms;
    while (this.messages.length < n) {
      if (Date.now() > deadline) throw new Error(`${this.messages.length} of ${n} messages arrived`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.messages;
  }
}

/** An mqtt.js client (no reconnects) with its message log, once connected; a refused CONNECT rejects. */
export async function openClient(url: string, opts: IClientOptions = {}): Promise<{ client: MqttClient; log: MessageLog }> {
  const client = mqttConnect(url, { reconnectPeriod: 0, connectTimeout: 10_000, ...opts });
  const log = new MessageLog(client);
  await new Promise<void>((resolve, reject) => {
    client.once("connect", () => resolve());
    client.once("error", reject);
    client.once("close", () => reject(new Error("closed before CONNACK")));
  });
  return { client, log };
}
