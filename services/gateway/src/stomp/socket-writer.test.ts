import { describe, expect, it } from "vitest";
import { MAX_PENDING_WRITES, SocketWriter, type StompSocket } from "./socket-writer.ts";

/** A socket whose writes complete only when `flush()` says so. */
class FakeSocket implements StompSocket {
  bufferedAmount = 0;
  isOpen = true;
  closedWith: number | null = null;
  private readonly queued: { size: number; done: () => void }[] = [];
  send(text: string, done: () => void): void {
    this.bufferedAmount += text.length;
    this.queued.push({ size: text.length, done });
  }
  flush(n: number): void {
    for (const w of this.queued.splice(0, n)) {
      this.bufferedAmount -= w.size;
      w.done();
    }
  }
  close(code: number): void {
    this.closedWith = code;
    this.isOpen = false;
  }
  pause(): void {}
  resume(): void {}
}

describe("SocketWriter", () => {
  it("has room up to the limit, then waits until half of it is written", async () => {
    const socket = new FakeSocket();
    const out = new SocketWriter(socket, 100);
    for (let i = 0; i < 11; i++) out.send("x".repeat(10));
    let roomy = false;
    void out.room().then(() => {
      roomy = true;
    });
    socket.flush(3);
    await Promise.resolve();
    expect(roomy).toBe(false);
    socket.flush(3);
    await Promise.resolve();
    expect(roomy).toBe(true);
  });

  it("has no room past MAX_PENDING_WRITES writes however small, until half of them completed", async () => {
    const socket = new FakeSocket();
    const out = new SocketWriter(socket, 1 << 20);
    for (let i = 0; i <= MAX_PENDING_WRITES; i++) out.send("p");
    let roomy = false;
    void out.room().then(() => {
      roomy = true;
    });
    socket.flush(MAX_PENDING_WRITES / 2);
    await Promise.resolve();
    expect(roomy).toBe(false);
    socket.flush(1);
    await Promise.resolve();
    expect(roomy).toBe(true);
  });

  it("lets waiters go on when the socket closes, and sends nothing after", async () => {
    const socket = new FakeSocket();
    const out = new SocketWriter(socket, 10);
    out.send("x".repeat(50));
    const waiting = out.room();
    out.closed();
    await waiting;
    out.send("late");
    expect(socket.bufferedAmount).toBe(50);
    expect(out.open).toBe(false);
  });

  it("closes once", () => {
    const socket = new FakeSocket();
    const out = new SocketWriter(socket, 10);
    out.close(1000, "bye");
    out.close(1002, "again");
    expect(socket.closedWith).toBe(1000);
  });
});
