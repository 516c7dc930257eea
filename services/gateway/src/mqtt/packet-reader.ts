import { type Packet, type Parser, parser } from "mqtt-packet";
import type { BatchDecoder } from "../stomp/intake.ts";

/** Why the bytes of a connection cannot be read on: a packet above the limit, or a malformed one. */
export type ReadProblem = { kind: "too-large"; bytes: number } | { kind: "malformed"; message: string };

/** A packet, or the problem that ends the stream (always the last item read). */
export type ReadItem = Packet | { problem: ReadProblem };

/**
 * Bytes handed to the parser at once: a slice of 2-byte packets (PINGREQ) decodes at most 2,048
 * of them, so one take() costs at most its `max` packets plus one slice, whatever a read holds.
 */
const SLICE_BYTES = 4096;

/**
 * Packets out of a byte stream (a TCP connection, or the binary WebSocket messages of one
 * connection: a packet may span messages, a message may hold several), decoded by mqtt-packet,
 * a bounded number per take() (Intake). A packet whose remaining length is above `maxBytes` is
 * refused as soon as its length is read, before its body is buffered. After a problem the reader
 * reads nothing more: the connection ends. The protocol level a CONNECT names is adopted for the
 * packets after it.
 */
export class PacketReader implements BatchDecoder<ReadItem> {
  private readonly maxBytes: number;
  private readonly parser: Parser;
  /** Reads not yet handed to the parser; the first one from `offset`. */
  private readonly chunks: Buffer[] = [];
  private offset = 0;
  private held = 0;
  /** Decoded and not yet taken (a slice may complete more packets than asked for). */
  private readonly packets: Packet[] = [];
  private problem: ReadProblem | null = null;
  private problemTaken = false;

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

  get buffered(): number {
    return this.held;
  }

  append(bytes: Buffer): void {
    if (this.problem || bytes.length === 0) return;
    this.chunks.push(bytes);
    this.held += bytes.length;
  }

  take(max: number): ReadItem[] {
    while (this.packets.length < max && !this.problem && this.held > 0) this.parseSlice();
    const out: ReadItem[] = this.packets.splice(0, max);
    if (this.problem && this.packets.length === 0 && !this.problemTaken && out.length < max) {
      // The packets before the problem are read; then the problem, once, and nothing after it.
      this.problemTaken = true;
      this.dropInput();
      out.push({ problem: this.problem });
    }
    return out;
  }

  private parseSlice(): void {
    const chunk = this.chunks[0] as Buffer;
    const end = Math.min(chunk.length, this.offset + SLICE_BYTES);
    const slice = chunk.subarray(this.offset, end);
    this.held -= slice.length;
    if (end === chunk.length) {
      this.chunks.shift();
      this.offset = 0;
    } else {
      this.offset = end;
    }
    this.parser.parse(slice);
    const pending = (this.parser as Parser & { packet?: { length?: number } }).packet?.length ?? -1;
    if (!this.problem && pending > this.maxBytes) this.problem = { kind: "too-large", bytes: pending };
  }

  private dropInput(): void {
    this.chunks.length = 0;
    this.offset = 0;
    this.held = 0;
  }
}
