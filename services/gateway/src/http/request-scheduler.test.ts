import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { RequestScheduler } from "./request-scheduler.ts";

/** Just what the scheduler and socket-reading touch of a connection. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  reading = true;
  pause(): this {
    this.reading = false;
    return this;
  }
  resume(): this {
    this.reading = true;
    return this;
  }
}
const socket = () => new FakeSocket() as FakeSocket & Duplex;
/** An answer the test ends with `close()`, as Node's response emits "close" once sent. */
const answer = () => new EventEmitter() as EventEmitter & ServerResponse;
const turn = () => new Promise((r) => setImmediate(r));
async function until(what: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !what(); i++) await turn();
}

describe("RequestScheduler", () => {
  it("starts a request at once while the turn's slice lasts and the connection has room", () => {
    const s = new RequestScheduler(1_000);
    const ran: number[] = [];
    const a = socket();
    for (let i = 0; i < 5; i++) s.admit(a, answer(), () => ran.push(i));
    expect(ran).toEqual([0, 1, 2, 3, 4]);
  });

  it("once the slice is used, queues requests and starts them in later turns, each connection in order, connections in turn", async () => {
    const s = new RequestScheduler(0);
    const ran: string[] = [];
    const [a, b] = [socket(), socket()];
    s.admit(a, answer(), () => ran.push("a0"));
    for (let i = 1; i <= 3; i++) s.admit(a, answer(), () => ran.push(`a${i}`));
    for (let i = 0; i < 2; i++) s.admit(b, answer(), () => ran.push(`b${i}`));
    expect(ran).toEqual(["a0"]);
    await until(() => ran.length === 6);
    expect(ran).toEqual(["a0", "a1", "b0", "a2", "b1", "a3"]);
  });

  // A 2,000-deep pipeline started at once put 2,000 queries in front of every other caller's.
  it("handles at most 8 requests of one connection at once; the next starts when one is answered, others are not held up", async () => {
    const s = new RequestScheduler(1_000);
    const a = socket();
    const answers = Array.from({ length: 12 }, answer);
    let started = 0;
    for (const res of answers) s.admit(a, res, () => started++);
    expect(started).toBe(8);
    // Another connection starts at once.
    let other = 0;
    s.admit(socket(), answer(), () => other++);
    expect(other).toBe(1);
    answers[0]?.emit("close");
    answers[1]?.emit("close");
    await until(() => started === 10);
    expect(started).toBe(10);
    for (const res of answers.slice(2)) res.emit("close");
    await until(() => started === 12);
    expect(started).toBe(12);
  });

  it("stops reading a connection with more than 32 waiting, and reads it again once they start", async () => {
    const s = new RequestScheduler(0);
    const a = socket();
    let started = 0;
    const start = (res: EventEmitter) => () => {
      started++;
      setImmediate(() => res.emit("close"));
    };
    for (let i = 0; i < 41; i++) {
      const res = answer();
      s.admit(a, res, start(res));
    }
    expect(a.reading).toBe(false);
    // Node resuming the socket on its own (a body read, a drained answer) is held off.
    a.resume();
    expect(a.reading).toBe(false);
    await until(() => started === 41);
    expect(started).toBe(41);
    expect(a.reading).toBe(true);
  });

  it("starts nothing more of a connection that was destroyed", async () => {
    const s = new RequestScheduler(0);
    const [a, b] = [socket(), socket()];
    const ran: string[] = [];
    s.admit(a, answer(), () => ran.push("a0"));
    s.admit(a, answer(), () => ran.push("a1"));
    s.admit(b, answer(), () => ran.push("b0"));
    a.destroyed = true;
    await until(() => ran.length === 2);
    for (let i = 0; i < 5; i++) await turn();
    expect(ran).toEqual(["a0", "b0"]);
  });
});
