import { generate } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { PacketReader } from "./packet-reader.ts";

const connect = generate({ cmd: "connect", protocolId: "MQTT", protocolVersion: 4, clean: true, clientId: "c", keepalive: 0 });
const ping = generate({ cmd: "pingreq" });

describe("PacketReader", () => {
  it("reads packets split across reads and several in one read", () => {
    const r = new PacketReader(1024);
    const bytes = Buffer.concat([connect, ping, ping]);
    expect(r.push(bytes.subarray(0, 5)).packets).toEqual([]);
    const { packets, problem } = r.push(bytes.subarray(5));
    expect(packets.map((p) => p.cmd)).toEqual(["connect", "pingreq", "pingreq"]);
    expect(problem).toBeNull();
  });

  it("refuses a packet above the limit as soon as its length is read, before its body arrives", () => {
    const r = new PacketReader(100);
    // PUBLISH with a remaining length of 1000; only the fixed header is sent.
    expect(r.push(Buffer.from([0x30, 0xe8, 0x07])).problem).toEqual({ kind: "too-large", bytes: 1000 });
    const whole = new PacketReader(10);
    const publish = generate({ cmd: "publish", topic: "t", payload: Buffer.alloc(20), qos: 0, dup: false, retain: false });
    expect(whole.push(publish).problem).toMatchObject({ kind: "too-large" });
  });

  it("a malformed packet ends the stream; what came before it is still read", () => {
    const r = new PacketReader(1024);
    // PUBREL with reserved flags 0000 instead of 0010 (MQTT-2.2.2-2).
    const { packets, problem } = r.push(Buffer.concat([ping, Buffer.from([0x60, 0x00])]));
    expect(packets.map((p) => p.cmd)).toEqual(["pingreq"]);
    expect(problem).toMatchObject({ kind: "malformed" });
    expect(r.push(ping).packets).toEqual([]);
  });
});
