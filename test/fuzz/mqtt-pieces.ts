import fc from "fast-check";
import { generate, type Packet } from "mqtt-packet";
import type { Seeds } from "./value-arbitraries.ts";

export type MqttVersion = 4 | 5;

/** What the server answers one packet with; `close`: the connection ends there (a refusal). */
export type MqttAnswer = "pingresp" | "suback" | "unsuback" | "puback" | "none" | "close";

/** One packet (or raw bytes) of a case, for the version and packet id it is given. */
export interface MqttStep {
  note: string;
  bytes: Buffer;
  answer: MqttAnswer;
}

export type MqttPiece = (v: MqttVersion, id: number) => MqttStep;

/** MQTT_MAX_PACKET_BYTES of the suite (the lowest allowed), so that oversized packets stay small. */
export const MAX_PACKET_BYTES = 4_096;
const MISSING = "fz.never.opened";

const packet = (note: string, answer: MqttAnswer, p: Packet) => (v: MqttVersion) => ({
  note,
  answer,
  bytes: generate(p, { protocolVersion: v }),
});
const raw =
  (note: string, bytes: number[] | Buffer): MqttPiece =>
  () => ({ note, answer: "close", bytes: Buffer.from(bytes) });

/** An MQTT variable byte integer. */
export function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/** Packets answered (or silently taken) with the connection kept: refusals of filters and topics included. */
export function answeredMqtt(seeds: Seeds): fc.Arbitrary<MqttPiece> {
  const filter = fc.constantFrom(MISSING, "fzm/#", "a+/b", "#", "+/x", "a/#/b", "", "$share/fz/#", seeds.topic);
  return fc.oneof(
    fc.constant<MqttPiece>((v) => packet("PINGREQ", "pingresp", { cmd: "pingreq" })(v)),
    fc.tuple(fc.array(filter, { minLength: 1, maxLength: 3 }), fc.constantFrom<0 | 1>(0, 1)).map(
      ([topics, qos]): MqttPiece =>
        (v, id) =>
          packet(`SUBSCRIBE ${topics.join(",")}`, "suback", {
            cmd: "subscribe",
            messageId: id,
            subscriptions: topics.map((topic) => ({ topic, qos })),
          })(v),
    ),
    fc.array(filter, { minLength: 1, maxLength: 3 }).map(
      (topics): MqttPiece =>
        (v, id) =>
          packet(`UNSUBSCRIBE ${topics.join(",")}`, "unsuback", { cmd: "unsubscribe", messageId: id, unsubscriptions: topics })(v),
    ),
    fc.constantFrom(MISSING, seeds.topic).map(
      (topic): MqttPiece =>
        (v) =>
          packet(`PUBLISH QoS 0 to ${topic === MISSING ? "a missing topic" : "T"}, no payload`, "none", {
            cmd: "publish",
            topic,
            payload: "",
            qos: 0,
            retain: false,
            dup: false,
          })(v),
    ),
    // No negative PUBACK in 3.1.1: a refused QoS 1 PUBLISH closes the connection there.
    fc.constant<MqttPiece>((v, id) =>
      packet("PUBLISH QoS 1 to a missing topic", v === 5 ? "puback" : "close", {
        cmd: "publish",
        topic: MISSING,
        payload: "x",
        qos: 1,
        messageId: id,
        retain: false,
        dup: false,
      })(v),
    ),
    fc.constant<MqttPiece>((v, id) =>
      packet("PUBLISH QoS 1 to T", "puback", {
        cmd: "publish",
        topic: seeds.topic,
        payload: `fz ${id}`,
        qos: 1,
        messageId: id,
        retain: false,
        dup: false,
      })(v),
    ),
    fc.integer({ min: 1, max: 65_535 }).map(
      (n): MqttPiece =>
        (v) =>
          packet(`PUBACK of unknown id ${n}`, "none", { cmd: "puback", messageId: n })(v),
    ),
  );
}

const second: MqttPiece = (v) =>
  packet("a second CONNECT", "close", {
    cmd: "connect",
    protocolId: "MQTT",
    protocolVersion: v,
    clean: true,
    clientId: "fz-again",
    keepalive: 0,
  })(v);

/** Packets that end an open connection: refused kinds, malformed, oversized, server-only. */
export const refusedMqtt: fc.Arbitrary<MqttPiece> = fc.oneof(
  fc.constant(second),
  fc.constant<MqttPiece>((v, id) =>
    packet("PUBLISH QoS 2", "close", { cmd: "publish", topic: MISSING, payload: "x", qos: 2, messageId: id, retain: false, dup: false })(v),
  ),
  fc
    .constantFrom<Packet>(
      { cmd: "pubrec", messageId: 1 },
      { cmd: "pubrel", messageId: 1 },
      { cmd: "pubcomp", messageId: 1 },
      { cmd: "connack", returnCode: 0, sessionPresent: false },
      { cmd: "suback", messageId: 1, granted: [0] },
      { cmd: "unsuback", messageId: 1, granted: [0] },
      { cmd: "pingresp" },
    )
    .map(
      (p): MqttPiece =>
        (v) =>
          packet(`${p.cmd.toUpperCase()} from a client`, "close", p)(v),
    ),
  fc.constantFrom(
    raw("reserved packet type 0", [0x00, 0x00]),
    raw("packet type 15 (AUTH, no reason)", [0xf0, 0x01, 0x99]),
    raw("PINGREQ with flag bits", [0xc1, 0x00]),
    raw("SUBSCRIBE with flags 0", [0x80, 0x06, 0, 1, 0, 1, 0x61, 0]),
    // No topic filter (MQTT-3.8.3-3, MQTT-3.10.3-2; issue 28): a protocol violation. MQTT 5 reads the
    // missing property length as malformed; 3.1.1 as an empty list, once answered (UNSUBACK).
    raw("SUBSCRIBE with no filter", [0x82, 0x02, 0, 1]),
    raw("UNSUBSCRIBE with no filter", [0xa2, 0x02, 0, 1]),
    raw("DISCONNECT with flag bits", [0xe1, 0x00]),
    raw("PUBLISH with both QoS bits", [0x36, 0x05, 0, 1, 0x61, 0, 1]),
    raw("remaining length of five bytes", [0x30, 0xff, 0xff, 0xff, 0xff, 0x01]),
    raw("remaining length 268,435,455", [0x30, 0xff, 0xff, 0xff, 0x7f, 0, 1, 0x61]),
  ),
  fc
    .integer({ min: MAX_PACKET_BYTES + 1, max: 8 * MAX_PACKET_BYTES })
    .chain((len) => fc.boolean().map((whole) => ({ len, whole })))
    .map(({ len, whole }) =>
      raw(`PUBLISH of ${len} bytes (${whole ? "all sent" : "length only"})`, [
        0x30,
        ...varint(len),
        ...(whole ? [0, 1, 0x61, ...Buffer.alloc(len - 3, 0x62)] : []),
      ]),
    ),
  // Type 0 of length 0: mqtt-packet names a reserved type only once the body the length declares is in.
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => raw("garbage after an empty type-0 packet", [0x00, 0x00, ...b])),
);

/** What may come first instead of a good CONNECT: anything else (closed unanswered), or a CONNECT refused with a CONNACK. */
export const beforeConnect: fc.Arbitrary<{ step: MqttPiece; connack: boolean }> = fc.oneof(
  answeredMqtt({ topic: MISSING, eventId: "" }).map((step) => ({
    step: (v: MqttVersion, id: number) => ({ ...step(v, id), answer: "close" as const }),
    connack: false,
  })),
  refusedMqtt
    .map((step) => ({
      step: (v: MqttVersion, id: number) => ({ ...step(v, id), note: `${step(v, id).note} before CONNECT` }),
      connack: false,
    }))
    .filter(
      // A second CONNECT is a first one here.
      (s) => !s.step(4, 1).note.startsWith("a second CONNECT"),
    ),
  fc.constantFrom(
    { step: raw("CONNECT of protocol level 6", [0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 6, 2, 0, 0, 0, 0]), connack: true },
    { step: raw("CONNECT of protocol level 0", [0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 0, 2, 0, 0, 0, 0]), connack: true },
    { step: raw("CONNECT naming MQTX", [0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x58, 4, 2, 0, 0, 0, 0]), connack: true },
    { step: raw("CONNECT, empty id, clean 0", [0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0, 0, 0, 0, 0]), connack: true },
    { step: raw("CONNECT with reserved flag", [0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 3, 0, 0, 0, 0]), connack: true },
    { step: raw("CONNECT cut inside its id", [0x10, 14, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 2, 0, 0, 0, 9, 0x61, 0x62]), connack: true },
  ),
);
