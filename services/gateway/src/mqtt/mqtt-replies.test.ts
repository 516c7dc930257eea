import { type Packet, parser } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { BrokerError } from "@evb/domain";
import { connack, delivery, encode, puback, Reason, refusalOf, suback, unsuback } from "./mqtt-replies.ts";

function decode(bytes: Buffer, version: 4 | 5): Packet {
  const p = parser({ protocolVersion: version });
  const out: Packet[] = [];
  p.on("packet", (x: Packet) => out.push(x));
  p.parse(bytes);
  return out[0] as Packet;
}

describe("MQTT replies", () => {
  it("use the standard fixed-header flags (not the original's QoS bits)", () => {
    expect(encode(connack(4, Reason.SUCCESS, false), 4)[0]).toBe(0x20);
    expect(encode(puback(4, 1), 4)[0]).toBe(0x40);
    expect(encode(suback(4, 1, [1]), 4)[0]).toBe(0x90);
    expect(encode(unsuback(4, 1, [0]), 4)[0]).toBe(0xb0);
  });

  it("CONNACK: 3.1.1 return codes stand for MQTT 5 reasons", () => {
    expect(connack(4, Reason.BAD_CREDENTIALS, false)).toMatchObject({ returnCode: 4 });
    expect(connack(4, Reason.NOT_AUTHORIZED, false)).toMatchObject({ returnCode: 5 });
    expect(connack(4, Reason.CLIENT_ID_INVALID, false)).toMatchObject({ returnCode: 2 });
    expect(connack(4, Reason.SERVER_UNAVAILABLE, false)).toMatchObject({ returnCode: 3 });
    expect(connack(5, Reason.BAD_CREDENTIALS, false)).toMatchObject({ reasonCode: 0x86 });
  });

  it("PUBACK: MQTT 5 carries a failure's reason code and string; SUBACK: 3.1.1 writes any failure as 0x80", () => {
    const ack = decode(encode(puback(5, 9, { reason: 0x90, message: "topic not exist (100101)" }), 5), 5);
    expect(ack).toMatchObject({ cmd: "puback", messageId: 9, reasonCode: 0x90, properties: { reasonString: "topic not exist (100101)" } });
    expect(suback(4, 1, [1, 0x8f, 0x97])).toMatchObject({ granted: [1, 0x80, 0x80] });
    expect(suback(5, 1, [1, 0x8f])).toMatchObject({ granted: [1, 0x8f] });
  });

  it("a delivery is the raw content on the event's topic; MQTT 5 adds eventId and extensions as user properties", () => {
    const event = { topic: "a/b", content: Buffer.from([0x68, 0x69]), eventId: "e-1-2", extensions: { "event-tag": "t" } };
    expect(decode(encode(delivery(4, event, 1, 3), 4), 4)).toMatchObject({
      topic: "a/b",
      payload: Buffer.from("hi"),
      qos: 1,
      messageId: 3,
    });
    const v5 = decode(encode(delivery(5, event, 0, undefined), 5), 5);
    expect(v5).toMatchObject({ qos: 0, properties: { userProperties: { eventId: "e-1-2", "event-tag": "t" } } });
  });

  it("refusalOf: topic errors 0x90, content errors 0x99, anything else 0x80 with the broker's message and code", () => {
    expect(refusalOf(BrokerError.of("TOPIC_NOT_EXIST"))).toEqual({ reason: 0x90, message: "topic not exist (100101)" });
    expect(refusalOf(BrokerError.of("CONTENT_TOO_LONG")).reason).toBe(0x99);
    expect(refusalOf(BrokerError.of("EXTENSIONS_TOO_LONG")).reason).toBe(0x80);
    expect(refusalOf(new Error("pg down"))).toMatchObject({ reason: 0x80, message: expect.stringMatching(/200202/) });
  });
});
