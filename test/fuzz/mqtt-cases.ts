import fc from "fast-check";
import { generate, type Packet } from "mqtt-packet";
import { shown } from "./framing-socket.ts";
import {
  answeredMqtt,
  beforeConnect,
  MAX_PACKET_BYTES,
  type MqttAnswer,
  type MqttStep,
  type MqttVersion,
  refusedMqtt,
} from "./mqtt-pieces.ts";
import type { Seeds } from "./value-arbitraries.ts";

/** A reply owed, with the packet id it must carry (none for PINGRESP). */
export interface OwedPacket {
  cmd: Exclude<MqttAnswer, "none" | "close">;
  id?: number;
}

/**
 * How a case ends. `refused`: a packet the server refuses (or bytes cut short and a half-close):
 * closed, the replies so far in order, MQTT 5 maybe a DISCONNECT with a failure reason last.
 * `disconnect`: the suite's own DISCONNECT after every reply was owed: the connection stayed
 * usable. `text`: a text message on the WebSocket: closed 1003.
 */
export type MqttEnding = "refused" | "disconnect" | "text";

export interface MqttCase {
  note: string;
  version: MqttVersion;
  transport: "tcp" | "ws";
  /** TCP writes or WebSocket binary messages, in order. */
  chunks: Buffer[];
  /** TCP: half-close after the last write. */
  halfClose: boolean;
  /** A good CONNECT comes first: a CONNACK 0 is owed before anything. */
  connected: boolean;
  /** Not connected: a CONNACK refusing the CONNECT may come before the close. */
  refusingConnack: boolean;
  owed: OwedPacket[];
  ending: MqttEnding;
  /** MQTT 5, a refused ending: the reason code the server's DISCONNECT must give (absent: any failure, or none). */
  failure?: number;
  boundMs: number;
  heavy: boolean;
}

export const MQTT_BOUND_MS = 10_000;
let clients = 0;

export function connectBytes(v: MqttVersion, clientId = `fz-${process.pid}-${++clients}`, keepalive = 0): Buffer {
  return generate({ cmd: "connect", protocolId: "MQTT", protocolVersion: v, clean: true, clientId, keepalive }, { protocolVersion: v });
}

const DISCONNECT: Packet = { cmd: "disconnect" };

/** `bytes` cut at `cuts` (fractions of its length), as separate writes or messages. */
function split(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((f) => Math.floor(f * bytes.length)))].filter((i) => i > 0 && i < bytes.length).sort((a, b) => a - b);
  return [0, ...at].map((start, i) => bytes.subarray(start, at[i] ?? bytes.length));
}

interface Shape {
  version: MqttVersion;
  transport: "tcp" | "ws";
  cuts: number[];
}

const shape: fc.Arbitrary<Shape> = fc.record({
  version: fc.constantFrom<MqttVersion>(4, 5),
  transport: fc.constantFrom<"tcp" | "ws">("tcp", "ws"),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
});

/** A CONNECT, up to 10 answered packets, an ending, and packets after it that must go unanswered. */
function connectedCase(seeds: Seeds): fc.Arbitrary<MqttCase> {
  const ending = fc.oneof(
    { weight: 3, arbitrary: refusedMqtt.map((p) => ({ kind: "refused" as const, piece: p })) },
    { weight: 1, arbitrary: fc.constant({ kind: "disconnect" as const }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }).map((cut) => ({ kind: "cut" as const, cut })) },
  );
  const answered = answeredMqtt(seeds);
  return fc
    .record({
      shape,
      keepalive: fc.constantFrom(0, 60),
      lead: fc.array(answered, { maxLength: 10 }),
      ending,
      tail: fc.array(answered, { maxLength: 3 }),
    })
    .map(({ shape: s, keepalive, lead, ending, tail }) => {
      const v = s.version;
      const steps: MqttStep[] = lead.map((p, i) => p(v, i + 1));
      // A lead packet answered by a close (3.1.1's refused QoS 1 PUBLISH) is the ending.
      const closing = steps.findIndex((st) => st.answer === "close");
      const kept = closing < 0 ? steps : steps.slice(0, closing + 1);
      const owed = kept.flatMap((st, i): OwedPacket[] =>
        st.answer === "none" || st.answer === "close" ? [] : [{ cmd: st.answer, ...(st.answer === "pingresp" ? {} : { id: i + 1 }) }],
      );
      let end: { note: string; bytes: Buffer; kind: MqttEnding; halfClose: boolean };
      if (closing >= 0) end = { note: "(closed there)", bytes: Buffer.alloc(0), kind: "refused", halfClose: false };
      else if (ending.kind === "refused") {
        const st = ending.piece(v, 900);
        end = { note: st.note, bytes: st.bytes, kind: "refused", halfClose: false };
      } else if (ending.kind === "disconnect") {
        end = { note: "DISCONNECT", bytes: generate(DISCONNECT, { protocolVersion: v }), kind: "disconnect", halfClose: false };
      } else if (s.transport === "ws") {
        end = { note: "a text message", bytes: Buffer.alloc(0), kind: "text", halfClose: false };
      } else {
        const whole = generate({ cmd: "subscribe", messageId: 901, subscriptions: [{ topic: "fz/cut", qos: 0 }] }, { protocolVersion: v });
        end = {
          note: `a SUBSCRIBE cut ${ending.cut} byte(s) short, then a half-close`,
          bytes: whole.subarray(0, whole.length - ending.cut),
          kind: "refused",
          halfClose: true,
        };
      }
      // Packets after the ending go unanswered; the text message is sent after every binary one, so none follow it.
      const after = end.halfClose || end.kind === "text" ? [] : tail.map((p, i) => p(v, 950 + i).bytes);
      const bytes = Buffer.concat([connectBytes(v, undefined, keepalive), ...kept.map((st) => st.bytes), end.bytes, ...after]);
      const note = `MQTT ${v} over ${s.transport}: CONNECT, ${kept.map((st) => st.note).join(", ") || "nothing"}, then ${end.note}`;
      return printable({
        note,
        version: v,
        transport: s.transport,
        chunks: split(bytes, s.cuts),
        halfClose: end.halfClose,
        connected: true,
        refusingConnack: false,
        owed,
        ending: end.kind,
        boundMs: MQTT_BOUND_MS,
        heavy: false,
      });
    });
}

/** Anything but a good CONNECT first: closed, unanswered or after a CONNACK that refuses. */
function unconnectedCase(seeds: Seeds): fc.Arbitrary<MqttCase> {
  return fc
    .record({ shape, first: beforeConnect, tail: fc.array(answeredMqtt(seeds), { maxLength: 3 }) })
    .map(({ shape: s, first, tail }) => {
      const st = first.step(s.version, 1);
      const bytes = Buffer.concat([st.bytes, ...tail.map((p, i) => p(s.version, i + 2).bytes)]);
      return printable({
        note: `MQTT ${s.version} over ${s.transport}: ${st.note} first`,
        version: 4,
        transport: s.transport,
        chunks: split(bytes, s.cuts),
        halfClose: false,
        connected: false,
        refusingConnack: first.connack,
        owed: [],
        ending: "refused",
        boundMs: MQTT_BOUND_MS,
        heavy: false,
      });
    });
}

export function mqttCase(seeds: Seeds): fc.Arbitrary<MqttCase> {
  return fc.oneof({ weight: 4, arbitrary: connectedCase(seeds) }, { weight: 1, arbitrary: unconnectedCase(seeds) });
}

function printable(c: MqttCase): MqttCase {
  return Object.defineProperty(c, fc.toStringMethod, { value: () => describeMqttCase(c), enumerable: false });
}

export function describeMqttCase(c: MqttCase): string {
  const what = c.transport === "tcp" ? "write" : "binary message";
  const chunks = c.chunks.map(
    (b, i) => `  ${what} ${i + 1} (${b.length} bytes): ${b.toString("hex").slice(0, 1_200)}${b.length > 600 ? "…" : ""}`,
  );
  const end = c.halfClose ? "\n  then a half-close" : c.ending === "text" ? "\n  then a text message" : "";
  return `${c.note}\n${chunks.join("\n")}${end}\n  (latin1: ${shown(Buffer.concat(c.chunks), 400)})`;
}

/** `bytes` in pieces of at most `size` (a WebSocket message may not exceed MQTT_MAX_PACKET_BYTES by more than a header). */
function pieces(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

/**
 * The largest shapes, run first whatever the seed: floods of PINGREQs (a megabyte in one write
 * among them), of QoS 1 PUBLISHes past STOMP_MAX_PENDING_PUBLISHES (3.1.1: answered in order;
 * MQTT 5: past the Receive Maximum its CONNACK announced, DISCONNECT 0x93).
 */
export function mqttFloods(seeds: Seeds): MqttCase[] {
  const flood = (
    v: MqttVersion,
    transport: "tcp" | "ws",
    note: string,
    packets: Packet[],
    owed: OwedPacket[],
    { heavy = true, failure }: { heavy?: boolean; failure?: number } = {},
  ): MqttCase =>
    printable({
      note: `MQTT ${v} over ${transport}: ${note}`,
      version: v,
      transport,
      chunks: pieces(
        Buffer.concat([
          connectBytes(v),
          ...packets.map((p) => generate(p, { protocolVersion: v })),
          ...(failure === undefined ? [generate(DISCONNECT, { protocolVersion: v })] : []),
        ]),
        transport === "ws" ? MAX_PACKET_BYTES : Number.POSITIVE_INFINITY,
      ),
      halfClose: false,
      connected: true,
      refusingConnack: false,
      owed,
      ending: failure === undefined ? "disconnect" : "refused",
      ...(failure === undefined ? {} : { failure }),
      boundMs: 30_000,
      heavy,
    });
  const pings = (n: number) => Array.from({ length: n }, (): Packet => ({ cmd: "pingreq" }));
  const pongs = (n: number) => Array.from({ length: n }, (): OwedPacket => ({ cmd: "pingresp" }));
  const ids = Array.from({ length: 100 }, (_, i) => i + 1);
  const publishes = ids.map(
    (id): Packet => ({ cmd: "publish", topic: seeds.topic, payload: `flood ${id}`, qos: 1, messageId: id, retain: false, dup: false }),
  );
  const acks = ids.map((id): OwedPacket => ({ cmd: "puback", id }));
  const filters = Array.from({ length: 350 }, (_, i) => ({ topic: `fz.m${i}`, qos: 1 as const }));
  const MEGABYTE_OF_PINGS = 512 * 1024;
  return [
    flood(4, "tcp", "50,000 PINGREQs in one write", pings(50_000), pongs(50_000)),
    flood(5, "ws", "50,000 PINGREQs in 4 KiB messages", pings(50_000), pongs(50_000)),
    flood(4, "tcp", "a megabyte of PINGREQs in one write", pings(MEGABYTE_OF_PINGS), pongs(MEGABYTE_OF_PINGS)),
    flood(4, "tcp", "100 QoS 1 PUBLISHes (past STOMP_MAX_PENDING_PUBLISHES: read on as PUBACKs go out)", publishes, acks, {
      heavy: false,
    }),
    flood(5, "tcp", "100 QoS 1 PUBLISHes (past the Receive Maximum: DISCONNECT 0x93)", publishes, acks, {
      heavy: false,
      failure: 0x93,
    }),
    flood(
      4,
      "tcp",
      "a SUBSCRIBE of 350 missing topics",
      [{ cmd: "subscribe", messageId: 7, subscriptions: filters }],
      [{ cmd: "suback", id: 7 }],
    ),
  ];
}
