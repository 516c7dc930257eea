import { EventEmitter } from "node:events";
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
const turn = () => new Promise((r) => setImmediate(r));
async function settle(scheduler: RequestScheduler, started: () => number, want: number): Promise<void> {
  for (let i = 0; i < 10_000 && started() < want; i++) await turn();
  expect(scheduler).toBeDefined();
}

describe("RequestScheduler", () => {
  it("starts a request at once while the turn's slice lasts", () => {
    const s = new RequestScheduler(1_000);
    const ran: number[] = [];
    const a = socket();
    for (let i = 0; i < 5; i++) s.admit(a, () => ran.push(i));
    expect(ran).toEqual([0, 1, 2, 3, 4]);
  });

  it("once the slice is used, queues requests and starts them in later turns, each connection in order, connections in turn", async () => {
    const s = new RequestScheduler(0);
    const ran: string[] = [];
    const [a, b] = [socket(), socket()];
    s.admit(a, () => ran.push("a0"));
    for (let i = 1; i <= 3; i++) s.admit(a, () => ran.push(`a${i}`));
    for (let i = 0; i < 2; i++) s.admit(b, () => ran.push(`b${i}`));
    expect(ran).toEqual(["a0"]);
    await settle(s, () => ran.length, 6);
    expect(ran).toEqual(["a0", "a1", "b0", "a2", "b1", "a3"]);
  });

  it("stops reading a connection with more than 32 waiting, and reads it again once they start", async () => {
    const s = new RequestScheduler(0);
    const a = socket();
    let started = 0;
    s.admit(a, () => started++);
    for (let i = 0; i < 40; i++) s.admit(a, () => started++);
    expect(a.reading).toBe(false);
    // Node resuming the socket on its own (a body read, a drained answer) is held off.
    a.resume();
    expect(a.reading).toBe(false);
    await settle(s, () => started, 41);
    expect(started).toBe(41);
    expect(a.reading).toBe(true);
  });

  it("starts nothing more of a connection that was destroyed", async () => {
    const s = new RequestScheduler(0);
    const [a, b] = [socket(), socket()];
    const ran: string[] = [];
    s.admit(a, () => ran.push("a0"));
    s.admit(a, () => ran.push("a1"));
    s.admit(b, () => ran.push("b0"));
    a.destroyed = true;
    await settle(s, () => ran.length, 2);
    for (let i = 0; i < 5; i++) await turn();
    expect(ran).toEqual(["a0", "b0"]);
  });
});
