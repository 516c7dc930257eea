import fc from "fast-check";
import { generate, type Packet, parser } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { silentLogger } from "@evb/domain";
import { ITEMS_PER_TURN, MAX_BUFFERED_BYTES } from "../stomp/intake.ts";
import { CallerQuota } from "../stomp/caller-quota.ts";
import type { StompSocket } from "../stomp/socket-writer.ts";
import { MemoryOwnerStore } from "../../../../test/support/mqtt-fakes.ts";
import { ClientSessions } from "./client-sessions.ts";
import { MqttConnection } from "./mqtt-connection.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import type { SessionStore, StoredSession } from "./session-store.ts";

/** A socket that decodes what the connection writes. */
class FakeSocket implements StompSocket {
  readonly packets: Packet[] = [];
  bufferedAmount = 0;
  isOpen = true;
  private readonly parser: ReturnType<typeof parser>;
  constructor(version: 4 | 5) {
    this.parser = parser({ protocolVersion: version });
    this.parser.on("packet", (p: Packet) => this.packets.push(p));
  }
  send(data: string | Buffer, done: () => void): void {
    this.parser.parse(Buffer.from(data));
    done();
  }
  close(): void {
    this.isOpen = false;
  }
  paused = false;
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
  }
}

class MemoryStore implements SessionStore {
  readonly sessions = new Map<string, StoredSession>();
  async load(id: string): Promise<StoredSession | null> {
    return this.sessions.get(id) ?? null;
  }
  async save(id: string, s: StoredSession): Promise<void> {
    this.sessions.set(id, s);
  }
  async drop(id: string): Promise<void> {
    this.sessions.delete(id);
  }
}

const clientSessions = () =>
  new ClientSessions({
    gatewayId: "gw-test",
    owners: new MemoryOwnerStore().view(),
    takeoverWaitMs: 1_000,
    refreshEveryMs: 60_000,
    logger: silentLogger,
  });

function deps(store: SessionStore = new MemoryStore(), clients = clientSessions()): MqttDeps {
  return {
    publisher: { start: async () => ({ outcome: Promise.resolve({ status: "SUCCESS", eventId: "e" }) }) },
    topics: { exists: async () => true },
    ledger: { head: async () => 5, after: async () => [] },
    groups: new Set(["1"]),
    checks: { required: false, admits: () => true, authorization: async () => ({ ok: true, key: null }), permits: async () => "ok" },
    blocks: { watch: () => () => {} },
    live: { has: () => false, add: () => {}, delivered: () => {}, remove: () => {} },
    quota: new CallerQuota({ subscriptions: 1_000, filters: 1_000 }),
    node: () => "127.0.0.1:1",
    store,
    clients,
    limits: {
      maxPacketBytes: 4096,
      maxInflight: 10,
      sessionExpiryMaxMs: 60_000,
      pageEvents: 10,
      sendBufferBytes: 65_536,
      maxPendingPublishes: 10,
      maxSubscriptions: 10,
      saveEveryMs: 60_000,
      connectTimeoutMs: 60_000,
    },
    now: Date.now,
    logger: silentLogger,
  };
}

/** Runs the microtask queue dry without letting the event loop turn. */
const microtasks = async () => {
  for (let i = 0; i < 2_000; i++) await Promise.resolve();
};
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};
const CONNECT = (clientId: string, clean = true, version: 4 | 5 = 4): Packet => ({
  cmd: "connect",
  protocolId: "MQTT",
  protocolVersion: version,
  clean,
  clientId,
  keepalive: 0,
});

function open(d: MqttDeps, version: 4 | 5 = 4) {
  const socket = new FakeSocket(version);
  const conn = new MqttConnection(d, socket, "127.0.0.1", null);
  const send = async (p: Packet) => {
    conn.receive(generate(p, { protocolVersion: version }));
    await settle();
  };
  return { socket, conn, send };
}

describe("MqttConnection", () => {
  it("closes without a reply on any packet before CONNECT", async () => {
    const { socket, send } = open(deps());
    await send({ cmd: "pingreq" });
    expect(socket.packets).toEqual([]);
    expect(socket.isOpen).toBe(false);
  });

  it("a persistent session's filters are stored at SUBSCRIBE and resumed on the next CONNECT with session-present", async () => {
    const store = new MemoryStore();
    const d = deps(store);
    const first = open(d);
    await first.send(CONNECT("x", false));
    await first.send({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic: "a/#", qos: 1 }] });
    expect(first.socket.packets.map((p) => p.cmd)).toEqual(["connack", "suback"]);
    expect(store.sessions.get("x")?.subscriptions).toEqual([
      { filter: "a/#", qos: 1, group: "1", position: { height: 5, idx: 2147483647 } },
    ]);
    first.conn.closed();
    await settle();
    const again = open(d);
    await again.send(CONNECT("x", false));
    expect(again.socket.packets[0]).toMatchObject({ cmd: "connack", sessionPresent: true });
    again.conn.closed();
    await settle();
    const clean = open(d);
    await clean.send(CONNECT("x", true));
    expect(clean.socket.packets[0]).toMatchObject({ cmd: "connack", sessionPresent: false });
    expect(store.sessions.has("x")).toBe(false);
  });

  it("a second connection with the client id ends the first (MQTT 5: DISCONNECT 0x8E)", async () => {
    const d = deps();
    const a = open(d, 5);
    await a.send(CONNECT("dup", true, 5));
    const b = open(d, 5);
    await b.send(CONNECT("dup", true, 5));
    expect(a.socket.packets.map((p) => p.cmd)).toEqual(["connack", "disconnect"]);
    expect(a.socket.packets[1]).toMatchObject({ reasonCode: 0x8e });
    expect(a.socket.isOpen).toBe(false);
    expect(b.socket.isOpen).toBe(true);
  });

  it("a malformed packet after CONNECT: MQTT 5 hears 0x81 in a DISCONNECT, then the close", async () => {
    const { socket, conn, send } = open(deps(), 5);
    await send(CONNECT("m", true, 5));
    conn.receive(Buffer.from([0x60, 0x00]));
    await settle();
    expect(socket.packets.at(-1)).toMatchObject({ cmd: "disconnect", reasonCode: 0x81 });
    expect(socket.isOpen).toBe(false);
  });

  it("one read of 40,000 PINGREQs is decoded and answered at most ITEMS_PER_TURN per turn, in order, reading paused meanwhile", async () => {
    const { socket, conn, send } = open(deps());
    await send(CONNECT("flood"));
    const read = Buffer.concat(Array.from({ length: 40_000 }, () => generate({ cmd: "pingreq" })));
    expect(read.length).toBeGreaterThan(MAX_BUFFERED_BYTES);
    conn.receive(read);
    expect(socket.paused).toBe(true);
    await microtasks();
    // Only microtasks ran since the read: one batch was handled, the rest waits for later turns.
    expect(socket.packets.length - 1).toBeLessThanOrEqual(ITEMS_PER_TURN);
    for (let i = 0; i < 2_000 && socket.packets.length < 40_001; i++) await new Promise((r) => setImmediate(r));
    expect(socket.packets.slice(1).every((p) => p.cmd === "pingresp")).toBe(true);
    expect(socket.packets).toHaveLength(40_001);
    expect(conn.intake.turns).toBeGreaterThanOrEqual(Math.floor(40_000 / ITEMS_PER_TURN) - 1);
    expect(socket.paused).toBe(false);
  });

  it("MQTT 5: CONNACK announces the Receive Maximum; one QoS 1 PUBLISH more in flight is DISCONNECT 0x93 and the close", async () => {
    const d = deps();
    d.publisher = { start: async () => ({ outcome: new Promise(() => {}) }) }; // never sealed: every PUBLISH stays in flight
    const { socket, conn, send } = open(d, 5);
    await send(CONNECT("rm", true, 5));
    expect(socket.packets[0]).toMatchObject({ cmd: "connack", properties: { receiveMaximum: 10 } });
    const publish = (id: number) =>
      generate(
        { cmd: "publish", topic: "t", payload: Buffer.from("x"), qos: 1, messageId: id, dup: false, retain: false },
        { protocolVersion: 5 },
      );
    conn.receive(Buffer.concat(Array.from({ length: 10 }, (_, i) => publish(i + 1))));
    await settle();
    expect(socket.isOpen).toBe(true);
    conn.receive(publish(11));
    await settle();
    expect(socket.packets.at(-1)).toMatchObject({ cmd: "disconnect", reasonCode: 0x93 });
    expect(socket.isOpen).toBe(false);
  });

  it("arbitrary bytes after CONNECT never throw: the connection answers, or ends", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }),
        fc.constantFrom<4 | 5>(4, 5),
        async (chunks, version) => {
          const { socket, conn, send } = open(deps(), version);
          await send(CONNECT("fuzz", true, version));
          for (const c of chunks) conn.receive(Buffer.from(c));
          await settle();
          expect(socket.packets[0]).toMatchObject({ cmd: "connack" });
          await conn.closed();
        },
      ),
      { numRuns: 200 },
    );
  });

  // Issue 28: an empty SUBSCRIBE was logged at ERROR with a stack each time (its SUBACK could not
  // be encoded) and an empty UNSUBSCRIBE was answered; both are protocol violations.
  describe("a SUBSCRIBE or UNSUBSCRIBE with no topic filter (MQTT-3.8.3-3, MQTT-3.10.3-2)", () => {
    /** The levels logged, in order. */
    const levels: string[] = [];
    const recording = {
      debug: () => void levels.push("debug"),
      info: () => void levels.push("info"),
      warn: () => void levels.push("warn"),
      error: () => void levels.push("error"),
    };
    // Message id 7, and for MQTT 5 an empty property list: nothing else, no filter.
    const empty = { subscribe: 0x82, unsubscribe: 0xa2 };
    const cases = (["subscribe", "unsubscribe"] as const).flatMap((cmd) => ([4, 5] as const).map((version) => ({ cmd, version })));

    it.each(cases)(
      "$cmd, version $version: closed (MQTT 5 after DISCONNECT 0x82), nothing answered, no error logged",
      async ({ cmd, version }) => {
        levels.length = 0;
        const d = { ...deps(), logger: recording };
        const { socket, conn, send } = open(d, version);
        await send(CONNECT(`empty-${cmd}`, true, version));
        const body = version === 5 ? [0x00, 0x07, 0x00] : [0x00, 0x07];
        conn.receive(Buffer.from([empty[cmd], body.length, ...body]));
        await settle();
        const after = socket.packets.slice(1);
        if (version === 5) expect(after).toMatchObject([{ cmd: "disconnect", reasonCode: 0x82 }]);
        else expect(after).toEqual([]);
        expect(socket.isOpen).toBe(false);
        expect(levels.filter((l) => l === "error" || l === "warn")).toEqual([]);
      },
    );
  });

  it("a $share/… filter is refused while the broker has no shared subscriptions: 0x9E in MQTT 5, 0x80 in 3.1.1 (issue 28)", async () => {
    for (const version of [4, 5] as const) {
      const { socket, send } = open(deps(), version);
      await send(CONNECT(`share-${version}`, true, version));
      const subscriptions = [
        { topic: "$share/g/a/#", qos: 1 as const },
        { topic: "a/#", qos: 1 as const },
      ];
      await send({ cmd: "subscribe", messageId: 2, subscriptions });
      expect(socket.packets[1]).toMatchObject({ cmd: "suback", messageId: 2, granted: [version === 5 ? 0x9e : 0x80, 1] });
      expect(socket.isOpen).toBe(true);
    }
  });
});
