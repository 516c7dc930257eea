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

/** Pieces of an incomplete packet the parser may hold before they are joined into one. */
const MAX_PIECES = 16;

/** The parser's buffer of bytes not yet read (mqtt-packet 9's `_list`, a bl BufferList). */
interface HeldBytes {
  length: number;
  slice(): Buffer;
  consume(bytes: number): unknown;
  append(buf: Buffer): unknown;
}

/**
 * Joins what the parser holds of the packet it reads into one buffer: it reads each field of a
 * packet through its buffer list, whose every lookup walks the pieces, so a SUBSCRIBE of 1,000
 * filters that came in ~3,000 WebSocket messages (mqtt.js writes each length, filter and option
 * byte apart) cost millions of steps when it completed.
 */
function joinPieces(parser: Parser): void {
  const held = (parser as unknown as { _list?: HeldBytes })._list;
  if (!held || held.length === 0) return;
  const all = held.slice();
  held.consume(held.length);
  held.append(all);
}

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
  /** Reads not yet handed to the parser: `chunks[first]` onwards, the first one from `offset`. */
  private chunks: Buffer[] = [];
  private first = 0;
  private offset = 0;
  private held = 0;
  /** Decoded and not yet taken (a slice may complete more packets than asked for). */
  private readonly packets: Packet[] = [];
  private problem: ReadProblem | null = null;
  /** Parses since a packet last completed: the pieces the parser holds of the packet it reads. */
  private piecesSincePacket = 0;
  private problemTaken = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
    this.parser = parser();
    this.parser.on("packet", (p: Packet) => {
      this.piecesSincePacket = 0;
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

  /**
   * Hands the parser up to SLICE_BYTES, joined from as many reads as it takes: a client that
   * writes a packet in many small pieces (mqtt.js over WebSocket sends a SUBSCRIBE's every filter,
   * length and option byte as messages of their own) would otherwise fill the parser's buffer
   * list with thousands of pieces, which it walks for each field it reads.
   */
  private parseSlice(): void {
    const parts: Buffer[] = [];
    let size = 0;
    while (size < SLICE_BYTES && this.first < this.chunks.length) {
      const chunk = this.chunks[this.first] as Buffer;
      const end = Math.min(chunk.length, this.offset + SLICE_BYTES - size);
      parts.push(chunk.subarray(this.offset, end));
      size += end - this.offset;
      if (end === chunk.length) {
        this.first++;
        this.offset = 0;
      } else {
        this.offset = end;
      }
    }
    if (this.first === this.chunks.length) {
      this.chunks = [];
      this.first = 0;
    } else if (this.first > 1_024) {
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
    this.held -= size;
    this.parser.parse(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size));
    if (++this.piecesSincePacket >= MAX_PIECES) {
      joinPieces(this.parser);
      this.piecesSincePacket = 0;
    }
    const pending = (this.parser as Parser & { packet?: { length?: number } }).packet?.length ?? -1;
    if (!this.problem && pending > this.maxBytes) this.problem = { kind: "too-large", bytes: pending };
  }

  private dropInput(): void {
    this.chunks = [];
    this.first = 0;
    this.offset = 0;
    this.held = 0;
  }
}
