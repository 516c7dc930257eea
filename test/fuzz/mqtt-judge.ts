import type { Packet } from "mqtt-packet";
import { exchange } from "./framing-socket.ts";
import type { MqttCase, OwedPacket } from "./mqtt-cases.ts";
import { MAX_PACKET_BYTES } from "./mqtt-pieces.ts";
import { mqttPackets } from "./normal-sessions.ts";
import { wsExchange } from "./stomp-wire.ts";

/** What the server did with an MQTT case, over either transport. */
export interface MqttExchange {
  bytes: Buffer;
  timedOut: boolean;
  /** WebSocket: the close code the server sent (null: none); TCP: undefined. */
  closeCode?: number | null;
  ms: number;
}

/** Sends case `c` over its transport and collects what the server sends until it closes. */
export async function mqttExchange(c: MqttCase, tcpPort: number, wsUrl: string): Promise<MqttExchange> {
  if (c.transport === "tcp") {
    const stages = c.chunks.map((bytes) => ({ bytes, delayMs: 0 }));
    const ex = await exchange(`http://127.0.0.1:${tcpPort}`, stages, { boundMs: c.boundMs, halfClose: c.halfClose });
    return { bytes: ex.bytes, timedOut: ex.timedOut, ms: ex.ms };
  }
  const messages = c.chunks.map((bytes) => ({ bytes, binary: true }));
  if (c.ending === "text") messages.push({ bytes: Buffer.from("PINGREQ"), binary: false });
  const ex = await wsExchange(wsUrl, messages, { boundMs: c.boundMs, protocols: ["mqtt"] });
  return { bytes: Buffer.concat(ex.messages), timedOut: ex.timedOut, closeCode: ex.closeCode, ms: ex.ms };
}

const name = (p: Packet) => ("messageId" in p && p.messageId !== undefined ? `${p.cmd}(${p.messageId})` : p.cmd);

function show(ps: readonly Packet[]): string {
  const s = ps.map(name);
  return s.length > 12 ? `${s.slice(0, 6).join(" ")} … ${s.slice(-6).join(" ")} (${s.length})` : s.join(" ");
}

function matches(p: Packet | undefined, o: OwedPacket): boolean {
  return p?.cmd === o.cmd && (o.id === undefined || ("messageId" in p && p.messageId === o.id));
}

function connackCode(p: Packet | undefined): number | undefined {
  return p?.cmd === "connack" ? (p.reasonCode ?? p.returnCode) : undefined;
}

/**
 * What is wrong with the server's side of `ex` for case `c`, or null: the bytes are MQTT
 * packets; a good CONNECT gets CONNACK 0 first, then one reply per packet owed one, in order
 * and with its packet id (deliveries, PUBLISH, may come between); the DISCONNECT ending gets
 * every reply owed, a refused ending a prefix of them and, MQTT 5 only, a DISCONNECT naming a
 * failure last (the case's `failure`, when it names one); anything before a good CONNECT is closed unanswered (a refused CONNECT may get a
 * refusing CONNACK); nothing after the ending is answered; the server closes within the bound.
 */
export function judgeMqtt(c: MqttCase, ex: MqttExchange): string | null {
  const packets = mqttPackets(ex.bytes, c.version);
  if (packets === null) return `the server sent bytes that are no MQTT ${c.version} packets: ${ex.bytes.toString("hex").slice(0, 400)}`;
  const replies = packets.filter((p) => p.cmd !== "publish");
  const seen = `replies: ${show(replies)}; ${ex.closeCode === undefined ? "" : `close ${ex.closeCode ?? "none"} `}after ${ex.ms} ms`;
  if (ex.timedOut) return `not closed within ${c.boundMs} ms; ${seen}`;
  if (!c.connected) {
    if (replies.length === 0) return null;
    const code = connackCode(replies[0]);
    return c.refusingConnack && replies.length === 1 && code !== undefined && code !== 0 ? null : `answered before a good CONNECT; ${seen}`;
  }
  // A message past MQTT_MAX_PACKET_BYTES + a header is refused whole by the WebSocket (1009), unread.
  const oversized = c.transport === "ws" && c.chunks.some((b) => b.length > MAX_PACKET_BYTES + 8);
  if (ex.closeCode === 1009 && !oversized) return `closed 1009 with no message past the limit; ${seen}`;
  // A half-closed connection is ended (the server allows no half-open TCP), and a refused message
  // closes the WebSocket, maybe before the CONNACK (which waits for the session store).
  if ((c.halfClose || c.ending === "text" || ex.closeCode === 1009) && replies.length === 0) return null;
  if (connackCode(replies[0]) !== 0) return `CONNECT not answered CONNACK 0; ${seen}`;
  const rest = replies.slice(1);
  const last = rest.at(-1);
  if (c.failure !== undefined && (last?.cmd !== "disconnect" || last.reasonCode !== c.failure))
    return `not ended by a DISCONNECT with reason ${c.failure}; ${seen}`;
  if (c.ending !== "disconnect" && last?.cmd === "disconnect") {
    if (c.version !== 5) return `a DISCONNECT from the server to MQTT ${c.version}; ${seen}`;
    if ((last.reasonCode ?? 0) < 0x80) return `DISCONNECT reason ${last.reasonCode} names no failure; ${seen}`;
    rest.pop();
  }
  // PUBACKs keep PUBLISH order among themselves (MQTT 4.6), not against SUBACK and UNSUBACK; and
  // a DISCONNECT (or a refusal) ends the connection at once, before the PUBACKs of PUBLISHes not
  // yet sealed: those may be missing at the end, never out of order.
  const acks = (ps: readonly (Packet | OwedPacket)[]) => ps.filter((p) => p.cmd === "puback");
  const others = (ps: readonly (Packet | OwedPacket)[]) => ps.filter((p) => p.cmd !== "puback");
  const prefix = (got: readonly (Packet | OwedPacket)[], owed: readonly (Packet | OwedPacket)[]) =>
    got.length <= owed.length && got.every((p, i) => matches(p as Packet, owed[i] as OwedPacket));
  const allOthers = c.ending !== "disconnect" || others(rest).length === others(c.owed).length;
  if (!prefix(acks(rest), acks(c.owed)) || !prefix(others(rest), others(c.owed)) || !allOthers) {
    const owed = c.owed.map((o) => `${o.cmd}${o.id === undefined ? "" : `(${o.id})`}`).join(" ");
    return `replies are not the owed ones in order (or something after the ending was answered); owed ${owed}; ${seen}`;
  }
  if (c.ending === "text" && ex.closeCode !== 1003)
    return `a text message closed ${ex.closeCode ?? "without a close frame"}, not 1003; ${seen}`;
  return null;
}
