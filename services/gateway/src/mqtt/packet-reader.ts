import { type Packet, type Parser, parser } from "mqtt-packet";

/** Why the bytes of a connection cannot be read on: a packet above the limit, or a malformed one. */
export type ReadProblem = { kind: "too-large"; bytes: number } | { kind: "malformed"; message: string };

/**
 * Packets out of a byte stream (a TCP connection, or the binary WebSocket messages of one
 * connection: a packet may span messages, a message may hold several), decoded by mqtt-packet.
 * A packet whose remaining length is above `maxBytes` is refused as soon as its length is read,
 * before its body is buffered. After a problem the reader reads nothing more: the connection
 * ends. The protocol level a CONNECT names is adopted for the packets after it.
 */
export class PacketReader {
  private readonly maxBytes: number;
  private readonly parser: Parser;
  private readonly packets: Packet[] = [];
  private problem: ReadProblem | null = null;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    this.parser = parser();
    this.parser.on("packet", (p: Packet) => {
      if (this.problem) return;
      if ((p.length ?? 0) > this.maxBytes) this.problem = { kind: "too-large", bytes: p.length ?? 0 };
      else this.packets.push(p);
    });
    this.parser.on("error", (err: unknown) => {
      this.problem ??= { kind: "malformed", message: err instanceof Error ? err.message : String(err) };
    });
  }

  /** The packets the bytes complete, in order, and the problem that ends the stream (if any). */
  push(bytes: Buffer): { packets: Packet[]; problem: ReadProblem | null } {
    if (!this.problem) {
      this.parser.parse(bytes);
      const pending = (this.parser as Parser & { packet?: { length?: number } }).packet?.length ?? -1;
      if (!this.problem && pending > this.maxBytes) this.problem = { kind: "too-large", bytes: pending };
    }
    const packets = this.packets.splice(0);
    return { packets, problem: this.problem };
  }
}
