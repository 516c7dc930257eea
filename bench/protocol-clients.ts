/**
 * The clients the bench's STOMP and MQTT generators speak through, one connection each: stompjs
 * over `ws` at `<context>/stomp`, mqtt.js (MQTT 5) over TCP at the gateway's MQTT_PORT. Neither
 * was written here, so the figures are what such a client gets. Used only inside the generator
 * processes (protocol-publisher.ts, protocol-subscriber.ts), never in the measuring process.
 */
import { Client, type IFrame } from "@stomp/stompjs";
import { connect, type IClientOptions, type IPublishPacket, type MqttClient } from "mqtt";
import WebSocket from "ws";

export type Protocol = "stomp" | "mqtt";

/** Where a generator connects: the STOMP WebSocket URL and the MQTT TCP port of one gateway. */
export interface ProtocolTarget {
  stompUrl: string;
  mqttPort: number;
}

/** A publish answered: sealed (RECEIPT with its eventId; MQTT's PUBACK names none, so "") or refused. */
export type PublishAnswer = { ok: true; eventId: string } | { ok: false; error: string };

export interface ProtocolPublisher {
  publish(topic: string, content: string): Promise<PublishAnswer>;
  close(): Promise<void>;
}

/** A delivered event as a subscriber saw it: its topic, eventId and arrival (epoch ms). */
export type Delivery = [topic: string, eventId: string, atEpochMs: number];

export const epochNow = (): number => performance.timeOrigin + performance.now();

export function connectStomp(url: string): Promise<Client> {
  const client = new Client({
    webSocketFactory: () => new WebSocket(url),
    reconnectDelay: 0,
    heartbeatIncoming: 0,
    heartbeatOutgoing: 0,
    debug: () => {},
  });
  return new Promise((resolve, reject) => {
    client.onConnect = () => resolve(client);
    client.onStompError = (f) => reject(new Error(`STOMP ERROR: ${f.headers.message}`));
    client.onWebSocketError = () => reject(new Error(`STOMP: WebSocket error at ${url}`));
    client.activate();
  });
}

/** SENDs with a `receipt` each; the RECEIPT (sealed) or an ERROR naming the receipt answers it. */
export async function stompPublisher(url: string): Promise<ProtocolPublisher> {
  const client = await connectStomp(url);
  const waiting = new Map<string, (a: PublishAnswer) => void>();
  let next = 0;
  const settle = (f: IFrame, answer: PublishAnswer) => {
    const id = f.headers["receipt-id"] ?? "";
    waiting.get(id)?.(answer);
    waiting.delete(id);
  };
  client.onUnhandledReceipt = (f) => settle(f, { ok: true, eventId: f.headers.eventId ?? "" });
  client.onStompError = (f) => settle(f, { ok: false, error: `${f.headers.code ?? ""} ${f.headers.message ?? ""}`.trim() });
  client.onWebSocketClose = () => {
    for (const done of waiting.values()) done({ ok: false, error: "connection closed" });
    waiting.clear();
  };
  return {
    publish: (topic, content) =>
      new Promise((resolve) => {
        const receipt = `p${next++}`;
        waiting.set(receipt, resolve);
        try {
          client.publish({ destination: topic, body: content, headers: { receipt } });
        } catch (err) {
          waiting.delete(receipt);
          resolve({ ok: false, error: String(err) });
        }
      }),
    close: () => client.deactivate(),
  };
}

/**
 * An MQTT 5 connection; `onMessage` is attached before CONNECT goes out, so a resumed session's
 * first deliveries (which may share a TCP read with the CONNACK) are not missed.
 */
export function connectMqtt(
  port: number,
  options: IClientOptions,
  onMessage?: (topic: string, p: IPublishPacket) => void,
): Promise<MqttClient> {
  const client = connect(`mqtt://127.0.0.1:${port}`, { protocolVersion: 5, reconnectPeriod: 0, keepalive: 0, ...options });
  if (onMessage) client.on("message", (topic, _payload, packet) => onMessage(topic, packet));
  return new Promise((resolve, reject) => {
    client.once("connect", () => resolve(client));
    client.once("error", reject);
  });
}

/** QoS 1 PUBLISHes on one MQTT 5 connection; a PUBACK means sealed, a reason code ≥ 0x80 refused. */
export async function mqttPublisher(port: number): Promise<ProtocolPublisher> {
  const client = await connectMqtt(port, { clean: true });
  return {
    publish: (topic, content) =>
      new Promise((resolve) => {
        client.publish(topic, content, { qos: 1 }, (err) => resolve(err ? { ok: false, error: err.message } : { ok: true, eventId: "" }));
      }),
    close: () => client.endAsync(),
  };
}
