import { describe, expect, it } from "vitest";
import { type BatchDecoder, Intake, ITEMS_PER_TURN, MAX_BUFFERED_BYTES } from "./intake.ts";

/** Items of one byte each; a leading 0xff starts an item that the bytes held never complete. */
class ByteDecoder implements BatchDecoder<number> {
  private bytes: number[] = [];
  decoded = 0;
  get buffered(): number {
    return this.bytes.length;
  }
  append(bytes: Buffer): void {
    for (const b of bytes) this.bytes.push(b);
  }
  take(max: number): number[] {
    const n = this.bytes[0] === 0xff ? 0 : Math.min(max, this.bytes.length);
    this.decoded += n;
    return this.bytes.splice(0, n);
  }
}

/**
 * An intake over one-byte items. Its time slice is unbounded unless `sliceMs` is given: the counts
 * per turn these tests assert are the batch rule's, and on a loaded machine a 4 ms slice would
 * cut a batch short and make them depend on the machine's speed (a run at load 7-10 handled 1 of 64).
 */
function intake(weight?: (n: number) => number, sliceMs = Number.POSITIVE_INFINITY, spinMs = 0) {
  const decoder = new ByteDecoder();
  const socket = {
    paused: false,
    pauses: 0,
    pause() {
      socket.paused = true;
      socket.pauses++;
    },
    resume() {
      socket.paused = false;
    },
  };
  const handled: number[] = [];
  let stop = false;
  const i = new Intake<number>({
    decoder,
    socket,
    handle: async (n) => {
      // A slow handler stands for a loaded machine.
      for (const until = performance.now() + spinMs; performance.now() < until; );
      handled.push(n);
    },
    stopped: () => stop,
    failed: () => {},
    sliceMs,
    ...(weight ? { weight } : {}),
  });
  const end = () => {
    stop = true;
  };
  return { i, decoder, socket, handled, stop: end };
}

/** Runs the microtask queue dry without letting the event loop turn. */
const microtasks = async () => {
  for (let n = 0; n < 2_000; n++) await Promise.resolve();
};
const turn = () => new Promise((r) => setImmediate(r));

describe("Intake", () => {
  it("decodes and handles at most ITEMS_PER_TURN items per turn of the event loop, in order", async () => {
    const { i, decoder, handled } = intake();
    const count = ITEMS_PER_TURN * 10 + 5;
    i.receive(Buffer.from(Array.from({ length: count }, (_, n) => n % 200)));
    expect(decoder.decoded).toBe(ITEMS_PER_TURN); // the first batch only, within receive's turn
    await microtasks();
    expect(handled).toHaveLength(ITEMS_PER_TURN);
    for (let t = 1; t <= 3; t++) {
      await turn();
      await microtasks();
      // One more batch per turn at most: decoding, not only handling, is spread over the turns.
      expect(decoder.decoded).toBeLessThanOrEqual((t + 1) * ITEMS_PER_TURN);
      expect(handled.length).toBeLessThanOrEqual(decoder.decoded);
    }
    for (let t = 0; t < 50 && handled.length < count; t++) await turn();
    expect(handled).toEqual(Array.from({ length: count }, (_, n) => n % 200));
    expect(i.turns).toBe(10);
  });

  it("handles more cheap items per turn, in proportion to their weight, and still turns", async () => {
    // Byte 1 is a cheap item (an acknowledgement) at 1/16; anything else costs 1.
    const { i, handled } = intake((n) => (n === 1 ? 1 / 16 : 1));
    const count = ITEMS_PER_TURN * 16 * 3;
    i.receive(Buffer.alloc(count, 1));
    for (let n = 0; n < 10; n++) await microtasks();
    // A whole turn's worth: 16 batches of cheap items before the loop turns, not one.
    expect(handled).toHaveLength(ITEMS_PER_TURN * 16);
    for (let t = 0; t < 50 && handled.length < count; t++) await turn();
    expect(handled).toHaveLength(count);
    expect(i.turns).toBe(3);
    // Items of weight 1 are still at most ITEMS_PER_TURN per turn.
    const costly = intake((n) => (n === 1 ? 1 / 16 : 1));
    costly.i.receive(Buffer.alloc(ITEMS_PER_TURN * 3, 2));
    await microtasks();
    expect(costly.handled).toHaveLength(ITEMS_PER_TURN);
  });

  it("pauses the socket while more than MAX_BUFFERED_BYTES wait undecoded, and reads again once they are handled", async () => {
    const { i, socket, handled } = intake();
    i.receive(Buffer.alloc(MAX_BUFFERED_BYTES + 1));
    expect(socket.paused).toBe(true);
    for (let t = 0; t < 2_000 && handled.length <= MAX_BUFFERED_BYTES; t++) await turn();
    expect(handled).toHaveLength(MAX_BUFFERED_BYTES + 1);
    expect(socket.paused).toBe(false);
  });

  it("reads again when what is held is an incomplete item, however large: pausing then would stall the connection", async () => {
    const { i, socket, handled } = intake();
    i.receive(Buffer.alloc(MAX_BUFFERED_BYTES * 2, 0xff));
    expect(socket.pauses).toBe(1);
    await turn();
    expect(handled).toEqual([]);
    expect(socket.paused).toBe(false);
  });

  it("keeps its per-turn count however slow the machine is (regression: 1 of 64 handled at load 7-10)", async () => {
    const { i, handled } = intake(undefined, Number.POSITIVE_INFINITY, 5);
    i.receive(Buffer.alloc(ITEMS_PER_TURN * 2));
    await microtasks();
    expect(handled).toHaveLength(ITEMS_PER_TURN);
  });

  it("lets the loop turn inside a batch once its time slice is used up", async () => {
    // A slice of 0 ms is always used up: every item is followed by a turn, so one batch of a
    // read's items cannot hold the loop however slow its handler is.
    const { i, handled } = intake(undefined, 0);
    i.receive(Buffer.alloc(ITEMS_PER_TURN));
    await microtasks();
    expect(handled).toHaveLength(1);
    for (let t = 0; t < 200 && handled.length < ITEMS_PER_TURN; t++) await turn();
    expect(handled).toHaveLength(ITEMS_PER_TURN);
  });

  it("handles nothing more once the connection ends", async () => {
    const { i, handled, stop } = intake();
    i.receive(Buffer.alloc(ITEMS_PER_TURN * 3));
    await microtasks();
    stop();
    for (let t = 0; t < 5; t++) await turn();
    expect(handled).toHaveLength(ITEMS_PER_TURN);
    i.receive(Buffer.alloc(1));
    await turn();
    expect(handled).toHaveLength(ITEMS_PER_TURN);
  });
});
