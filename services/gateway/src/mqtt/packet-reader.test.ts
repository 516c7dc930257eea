import { generate, type Packet } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { PacketReader, type ReadItem } from "./packet-reader.ts";

const connect = generate({ cmd: "connect", protocolId: "MQTT", protocolVersion: 4, clean: true, clientId: "c", keepalive: 0 });
const ping = generate({ cmd: "pingreq" });
const publish = (n: number) =>
  generate({ cmd: "publish", topic: "t", payload: Buffer.from(String(n)), qos: 1, messageId: (n % 65535) + 1, dup: false, retain: false });

/** Everything the reader holds, taken in one go. */
const all = (r: PacketReader) => r.take(Number.POSITIVE_INFINITY);
const cmds = (items: ReadItem[]) => items.map((i) => ("problem" in i ? "problem" : i.cmd));

describe("PacketReader", () => {
  it("reads packets split across reads and several in one read", () => {
    const r = new PacketReader(1024);
    const bytes = Buffer.concat([connect, ping, ping]);
    r.append(bytes.subarray(0, 5));
    expect(all(r)).toEqual([]);
    r.append(bytes.subarray(5));
    expect(cmds(all(r))).toEqual(["connect", "pingreq", "pingreq"]);
  });

  it("decodes nothing on append: a megabyte of small PUBLISHes is read at most `max` packets per take, in order", () => {
    const r = new PacketReader(1024);
    const count = 100_000;
    const bytes = Buffer.concat(Array.from({ length: count }, (_, i) => publish(i)));
    expect(bytes.length).toBeGreaterThan(1_000_000);
    r.append(bytes);
    expect(r.buffered).toBe(bytes.length);
    const seen: string[] = [];
    let takes = 0;
    for (let batch = r.take(64); batch.length > 0; batch = r.take(64)) {
      expect(batch.length).toBeLessThanOrEqual(64);
      for (const p of batch) seen.push(((p as Packet & { payload: Buffer }).payload ?? Buffer.alloc(0)).toString());
      takes++;
    }
    expect(takes).toBe(Math.ceil(count / 64));
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => String(i)));
    expect(r.buffered).toBe(0);
    // A hang bound, not a goal: 100,000 packets took 7.2 s on a machine at load 14 (0.5 s idle).
  }, 60_000);

  it("a take decodes at most one slice past what it returns: the rest of the read stays undecoded", () => {
    const r = new PacketReader(1024);
    r.append(Buffer.concat(Array.from({ length: 50_000 }, () => ping)));
    expect(r.take(10)).toHaveLength(10);
    expect(r.buffered).toBeGreaterThan(100_000 - 4096 - 1);
  });

  it("joins a packet written in thousands of small pieces into slices before parsing (as mqtt.js over WebSocket sends a SUBSCRIBE)", () => {
    const r = new PacketReader(65_536);
    const subscriptions = Array.from({ length: 1_000 }, (_, i) => ({ topic: `idle/${i}/+`, qos: 0 as const }));
    const bytes = generate({ cmd: "subscribe", messageId: 1, subscriptions });
    const parser = (r as unknown as { parser: { parse: (b: Buffer) => unknown } }).parser;
    let parses = 0;
    const parse = parser.parse.bind(parser);
    parser.parse = (b: Buffer) => {
      parses++;
      return parse(b);
    };
    for (let i = 0; i < bytes.length; i += 5) r.append(bytes.subarray(i, i + 5));
    const [packet] = all(r) as (Packet & { subscriptions: unknown[] })[];
    expect(packet?.subscriptions).toHaveLength(1_000);
    // A piece per parse would be ~2,900 pieces in the parser's buffer list, walked for each field read.
    expect(parses).toBeLessThanOrEqual(Math.ceil(bytes.length / 4096));
  });

  it("a packet that arrives a few bytes per read is held by the parser in a bounded number of pieces", () => {
    const r = new PacketReader(65_536);
    const subscriptions = Array.from({ length: 1_000 }, (_, i) => ({ topic: `idle/${i}/+`, qos: 0 as const }));
    const bytes = generate({ cmd: "subscribe", messageId: 1, subscriptions });
    const held = () => (r as unknown as { parser: { _list: { _bufs: unknown[] } } }).parser._list._bufs.length;
    let most = 0;
    for (let i = 0; i < bytes.length; i += 5) {
      r.append(bytes.subarray(i, i + 5));
      if (i + 5 < bytes.length) expect(r.take(10)).toEqual([]);
      most = Math.max(most, held());
    }
    expect(most).toBeLessThanOrEqual(16);
    expect((all(r)[0] as Packet & { subscriptions: unknown[] }).subscriptions).toHaveLength(1_000);
  });

  it("refuses a packet above the limit as soon as its length is read, before its body arrives", () => {
    const r = new PacketReader(100);
    // PUBLISH with a remaining length of 1000; only the fixed header is sent.
    r.append(Buffer.from([0x30, 0xe8, 0x07]));
    expect(all(r)).toEqual([{ problem: { kind: "too-large", bytes: 1000 } }]);
    const whole = new PacketReader(10);
    whole.append(generate({ cmd: "publish", topic: "t", payload: Buffer.alloc(20), qos: 0, dup: false, retain: false }));
    expect(all(whole)).toMatchObject([{ problem: { kind: "too-large" } }]);
  });

  it("a malformed packet ends the stream; what came before it is still read, the problem comes once, after its batch", () => {
    const r = new PacketReader(1024);
    // PUBREL with reserved flags 0000 instead of 0010 (MQTT-2.2.2-2).
    r.append(Buffer.concat([ping, ping, Buffer.from([0x60, 0x00]), ping]));
    expect(cmds(r.take(2))).toEqual(["pingreq", "pingreq"]);
    expect(r.take(2)).toMatchObject([{ problem: { kind: "malformed" } }]);
    r.append(ping);
    expect(all(r)).toEqual([]);
    expect(r.buffered).toBe(0);
  });
});
