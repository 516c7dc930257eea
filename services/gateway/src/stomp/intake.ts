import { setImmediate as nextTurn } from "node:timers/promises";
import { LoopBudget, SLICE_MS } from "../http/loop-budget.ts";
import type { StompSocket } from "./socket-writer.ts";

/**
 * Items (STOMP frames, MQTT packets) out of the bytes a connection read, decoded only when asked
 * for and at most `max` at a time: a read holding thousands of them costs one batch per turn.
 */
export interface BatchDecoder<T> {
  /** Keeps the bytes of one read (a TCP chunk, a WebSocket message); decodes nothing yet. */
  append(bytes: Buffer): void;
  /** The next items, in order, at most `max`; none when what is held does not complete one. */
  take(max: number): T[];
  /** Bytes appended and not yet decoded. */
  readonly buffered: number;
}

export interface IntakeOptions<T> {
  decoder: BatchDecoder<T>;
  socket: Pick<StompSocket, "pause" | "resume">;
  /** Handles one item; the next is handled once it resolves. */
  handle: (item: T) => Promise<void>;
  /** True once the connection ends: nothing more is handled. */
  stopped: () => boolean;
  /**
   * What an item costs of a turn's ITEMS_PER_TURN (1 by default): an acknowledgement that only
   * frees a slot (MQTT's PUBACK) costs a fraction, so a subscriber's acks for a fast stream are
   * not read at 64 per turn (that held a live MQTT subscriber to 3,400-5,100 events/s while the
   * stream ran at 7,300-7,500/s).
   */
  weight?: (item: T) => number;
  /** A handler threw: the connection is ended by the caller. */
  failed: (err: unknown) => void;
  /**
   * Milliseconds of handling after which a batch lets the loop turn before its next item (the
   * LoopBudget's slice; SLICE_MS by default). Tests of the per-turn counts pass Infinity, so
   * that what they count does not depend on how fast the machine is.
   */
  sliceMs?: number;
}

/** Items decoded and handled per turn of the event loop; the next batch waits for the next turn. */
export const ITEMS_PER_TURN = 64;
/** Undecoded bytes past which the socket is paused (TCP then holds the client): about one read. */
export const MAX_BUFFERED_BYTES = 64 * 1024;

/**
 * A connection's way in (protocols.md 2.1, 3.2): reads are kept undecoded and turned into items
 * ITEMS_PER_TURN at a time, each batch handled in order, one item at a time, before the event loop
 * turns (setImmediate) and the next batch is decoded. One read of a megabyte of small packets
 * thus never holds the loop: its decoding is spread like its handling (the LoopBudget cuts a slow
 * batch short too). While more than MAX_BUFFERED_BYTES wait undecoded the socket is paused; it
 * reads again once they are down to a quarter, or when what is held is an incomplete item (which
 * needs the next read: pausing then would stall the connection).
 */
export class Intake<T> {
  private readonly o: IntakeOptions<T>;
  private running = false;
  private paused = false;
  /** Turns yielded between batches so far (for tests: the work of one read was split). */
  turns = 0;

  constructor(o: IntakeOptions<T>) {
    this.o = o;
  }

  /** One read from the transport: kept, and decoded in later batches. */
  receive(bytes: Buffer): void {
    if (this.o.stopped()) return;
    this.o.decoder.append(bytes);
    if (!this.paused && this.o.decoder.buffered > MAX_BUFFERED_BYTES) {
      this.paused = true;
      this.o.socket.pause();
    }
    if (!this.running) void this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    const budget = new LoopBudget(this.o.sliceMs ?? SLICE_MS);
    const weight = this.o.weight ?? (() => 1);
    let spent = 0;
    try {
      for (;;) {
        const batch = this.o.decoder.take(ITEMS_PER_TURN);
        if (batch.length === 0) break;
        this.resumeIfLow();
        for (const item of batch) {
          if (this.o.stopped()) return;
          await this.o.handle(item);
          spent += weight(item);
          await budget.maybePause();
        }
        // A full batch may have more behind it: once a turn's worth was handled, the loop turns
        // before the next one is decoded.
        if (batch.length === ITEMS_PER_TURN && spent >= ITEMS_PER_TURN) {
          this.turns++;
          spent = 0;
          await nextTurn();
        }
      }
      this.resumeIfLow(true);
    } catch (err) {
      this.o.failed(err);
    } finally {
      this.running = false;
    }
  }

  /** Reads again once the backlog is low, or when what is held cannot complete without more bytes. */
  private resumeIfLow(incomplete = false): void {
    if (!this.paused || this.o.stopped()) return;
    if (incomplete || this.o.decoder.buffered <= MAX_BUFFERED_BYTES / 4) {
      this.paused = false;
      this.o.socket.resume();
    }
  }
}
