import type { IConnectPacket, Packet } from "mqtt-packet";
import type { SessionLogin } from "../sessions/session-key.ts";
import { Intake } from "../stomp/intake.ts";
import { SocketWriter, type StompSocket } from "../stomp/socket-writer.ts";
import { acceptConnect, connackProperties } from "./connect-flow.ts";
import type { MqttDeps } from "./mqtt-deps.ts";
import { connack, disconnect, encode, type MqttVersion, PINGRESP, Reason, type Refusal } from "./mqtt-replies.ts";
import { OpenSession } from "./open-session.ts";
import { PacketReader, type ReadItem, type ReadProblem } from "./packet-reader.ts";
import { emptyFilterList } from "./subscribe-flow.ts";

/** A PUBACK's share of a turn's packets (Intake weight). */
const PUBACK_WEIGHT = 1 / 16;

/**
 * One MQTT connection, over TCP or WebSocket (protocols.md 3): packets are handled one at a time
 * in arrival order, decoded and handled a bounded batch per turn of the event loop (Intake). The
 * first must be CONNECT (else the connection closes without a reply, as must a CONNECT not sent
 * within connectTimeoutMs); a malformed or oversized packet, a second CONNECT, QoS 2 and any
 * packet the broker does not take close it (MQTT 5: after a DISCONNECT naming the reason). No
 * packet for 1.5 keep-alives closes it too. Whatever ends the connection ends its session.
 */
export class MqttConnection {
  private readonly deps: MqttDeps;
  private readonly out: SocketWriter;
  /** The way in: undecoded reads, decoded and handled a batch per turn. */
  readonly intake: Intake<ReadItem>;
  private readonly remoteIp: string;
  private readonly identity: SessionLogin | null;
  private session: OpenSession | null = null;
  /** The level packets are written in: CONNECT's, once read. */
  private version: MqttVersion = 4;
  private connecting = false;
  private ending = false;
  private lastPacketAt: number;
  private timer?: NodeJS.Timeout;
  private finished?: Promise<void>;

  constructor(deps: MqttDeps, socket: StompSocket, remoteIp: string, identity: SessionLogin | null) {
    this.deps = deps;
    this.out = new SocketWriter(socket, deps.limits.sendBufferBytes);
    this.intake = new Intake({
      decoder: new PacketReader(deps.limits.maxPacketBytes),
      socket,
      handle: (item) => this.next(item),
      // A PUBACK only frees a slot of the delivery window: 1,024 of them per turn at most.
      weight: (item) => ("cmd" in item && item.cmd === "puback" ? PUBACK_WEIGHT : 1),
      stopped: () => this.ending || !this.out.open,
      failed: (err) => {
        deps.logger.error({ err }, "MQTT packet handling failed; closing the connection");
        this.fail({ reason: Reason.UNSPECIFIED, message: "internal error" });
      },
    });
    this.remoteIp = remoteIp;
    this.identity = identity;
    this.lastPacketAt = deps.now();
    this.timer = setTimeout(() => this.close(), deps.limits.connectTimeoutMs);
    this.timer.unref();
  }

  /** Bytes from the transport: decoded and handled in later batches, in order. */
  receive(bytes: Buffer): void {
    if (!this.ending) this.intake.receive(bytes);
  }

  private async next(item: ReadItem): Promise<void> {
    // Replies wait for room as deliveries do: a client that reads none of them (a PINGREQ
    // flood) is read no further, instead of its replies piling up here.
    await this.out.room();
    if (!this.out.open || this.ending) return;
    this.lastPacketAt = this.deps.now();
    if ("problem" in item) this.unreadable(item.problem);
    else await this.handle(item);
  }

  private async handle(p: Packet): Promise<void> {
    const session = this.session;
    if (p.cmd === "connect") return session || this.connecting ? this.fail(protocolError("a second CONNECT")) : this.connect(p);
    if (!session) return this.close(); // anything before CONNECT: closed without a reply (protocols.md 3.3)
    switch (p.cmd) {
      case "publish":
        return session.publish(p);
      case "puback":
        return session.acked(p.messageId ?? 0);
      case "subscribe":
      case "unsubscribe": {
        const empty = emptyFilterList(p);
        if (empty) return this.violation(empty);
        return p.cmd === "subscribe" ? session.subscribe(p) : session.unsubscribe(p);
      }
      case "pingreq":
        return this.send(PINGRESP);
      case "disconnect":
        session.disconnected(p);
        return this.close();
      default:
        // PUBREC/PUBREL/PUBCOMP (no QoS 2), AUTH, and packets only a server sends.
        return this.fail(protocolError(`${p.cmd.toUpperCase()} is not taken`));
    }
  }

  private async connect(p: IConnectPacket): Promise<void> {
    this.connecting = true;
    this.version = p.protocolVersion === 3 || p.protocolVersion === 5 ? p.protocolVersion : 4;
    clearTimeout(this.timer);
    const accepted = await acceptConnect(p, this.deps, this.identity, this, this.remoteIp);
    if (this.ending) {
      // Gone while its session was looked up: it holds the client id no more.
      if (!("reason" in accepted)) this.deps.clients.release(accepted.terms.clientId, this);
      return;
    }
    if ("reason" in accepted) {
      this.send(connack(this.version, accepted.reason, false, { reasonString: accepted.message }));
      return this.close();
    }
    const { terms, login, stored } = accepted;
    const link = { out: this.out, remoteIp: this.remoteIp, login, send: (q: Packet) => this.send(q), fail: (r: Refusal) => this.fail(r) };
    this.session = new OpenSession(this.deps, terms, link);
    this.session.resume(stored);
    const props = connackProperties(terms, this.deps.limits);
    this.send(connack(this.version, Reason.SUCCESS, stored !== null && !terms.clean, props));
    this.session.start();
    if (terms.keepAliveMs > 0) this.watchKeepAlive(terms.keepAliveMs);
  }

  /** Closes after 1.5 keep-alives without a packet (MQTT-3.1.2-24). */
  private watchKeepAlive(keepAliveMs: number): void {
    const limit = keepAliveMs * 1.5;
    this.timer = setInterval(
      () => {
        if (this.deps.now() - this.lastPacketAt > limit) this.fail({ reason: Reason.KEEP_ALIVE_TIMEOUT, message: "keep-alive timeout" });
      },
      Math.max(250, Math.floor(limit / 3)),
    );
    this.timer.unref();
  }

  private unreadable(problem: ReadProblem): void {
    this.deps.logger.debug({ problem, remoteIp: this.remoteIp }, "unreadable MQTT packet; closing");
    if (problem.kind === "too-large") {
      this.fail({ reason: Reason.PACKET_TOO_LARGE, message: `a packet of ${problem.bytes} bytes; MQTT_MAX_PACKET_BYTES is the limit` });
    } else if (!this.session && /protocol version/i.test(problem.message)) {
      // A CONNECT naming a protocol level the broker does not speak gets CONNACK 0x01 (3.1.1's code) first.
      this.send(connack(4, Reason.UNSUPPORTED_VERSION, false));
      this.close();
    } else {
      this.fail({ reason: Reason.MALFORMED_PACKET, message: `malformed packet: ${problem.message}` });
    }
  }

  /** Ends the connection for a protocol violation of the client's: its mistake, not the broker's, so logged at debug only. */
  private violation(refusal: Refusal): void {
    this.deps.logger.debug({ reason: refusal.message, remoteIp: this.remoteIp }, "MQTT protocol violation; closing");
    this.fail(refusal);
  }

  private send(packet: Packet): void {
    this.out.send(encode(packet, this.version));
  }

  /** Ends the connection for a failure: MQTT 5 hears why in a DISCONNECT (once it is open). */
  private fail(refusal: Refusal): void {
    if (this.ending) return;
    if (this.version === 5 && this.session) this.send(disconnect(refusal));
    this.close();
  }

  private close(): void {
    this.ending = true;
    this.out.close(1000, "MQTT connection closed");
  }

  /** Another connection took the client id: this one ends (MQTT 5: DISCONNECT 0x8E), its session stored first. */
  takeOver(): Promise<void> {
    this.fail({ reason: Reason.SESSION_TAKEN_OVER, message: "another connection took this client id" });
    return this.finish();
  }

  /** The transport closed (either side): the session ends (will, stored state) and gives up its client id; resolves once it has. */
  closed(): Promise<void> {
    this.ending = true;
    this.out.closed();
    return this.finish();
  }

  private finish(): Promise<void> {
    this.finished ??= (async () => {
      clearTimeout(this.timer);
      clearInterval(this.timer);
      const session = this.session;
      if (!session) return;
      await session.end().catch((err: unknown) => this.deps.logger.error({ err }, "an MQTT session did not end cleanly"));
      this.deps.clients.release(session.terms.clientId, this);
    })();
    return this.finished;
  }
}

function protocolError(what: string): Refusal {
  return { reason: Reason.PROTOCOL_ERROR, message: what };
}
