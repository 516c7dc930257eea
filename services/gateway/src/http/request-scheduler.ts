import type { Duplex } from "node:stream";
import { SLICE_MS } from "./loop-budget.ts";
import { holdReading, releaseReading } from "./socket-reading.ts";

/** Requests waiting on one connection above which it is read no further until they are taken. */
const PIPELINE_HOLD = 32;

/**
 * Starts requests at most about SLICE_MS of synchronous work per event-loop turn. Node's parser
 * emits every request of a read at once (libuv reads up to 32 × 64 KiB per turn): 2,000
 * pipelined GETs in one write were 2,000 handlers started in one turn and held the loop for
 * seconds. A request that arrives while this turn's slice is used up waits in its connection's
 * queue; queues are served round-robin, one request from each connection in turn, so one
 * connection's flood does not starve the others; a connection with more than PIPELINE_HOLD
 * waiting is not read until they are started (its answers still go out complete and in order:
 * Node keeps that order whatever order the handlers finish in).
 */
export class RequestScheduler {
  private readonly queues = new Map<Duplex, (() => void)[]>();
  private turnStart = -1;
  private draining = false;
  private readonly sliceMs: number;

  constructor(sliceMs = SLICE_MS) {
    this.sliceMs = sliceMs;
  }

  /** Runs `start` now when this turn has time left and `socket` has nothing waiting; otherwise queues it. */
  admit(socket: Duplex, start: () => void): void {
    const queue = this.queues.get(socket);
    if (!queue && this.withinSlice()) {
      start();
      return;
    }
    if (queue) queue.push(start);
    else this.queues.set(socket, [start]);
    if ((queue?.length ?? 1) === PIPELINE_HOLD + 1) holdReading(socket);
    this.scheduleDrain();
  }

  private withinSlice(): boolean {
    const now = performance.now();
    if (this.turnStart < 0) {
      this.turnStart = now;
      setImmediate(() => {
        this.turnStart = -1;
      });
      return true;
    }
    return now - this.turnStart < this.sliceMs;
  }

  private scheduleDrain(): void {
    if (this.draining) return;
    this.draining = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    const start = performance.now();
    this.turnStart = start;
    // At least one request per turn, however small the slice. The connection served goes to the
    // back of the line, so connections take turns.
    for (;;) {
      const first = this.queues.entries().next();
      if (first.done) break;
      const [socket, queue] = first.value;
      this.queues.delete(socket);
      if (socket.destroyed) {
        // Its answers can no longer be sent and Node has aborted its requests: none is started.
        if (queue.length > PIPELINE_HOLD) releaseReading(socket);
        continue;
      }
      const next = queue.shift();
      if (queue.length > 0) this.queues.set(socket, queue);
      if (queue.length === PIPELINE_HOLD) releaseReading(socket);
      next?.();
      if (performance.now() - start >= this.sliceMs) break;
    }
    this.draining = false;
    if (this.queues.size > 0) this.scheduleDrain();
    setImmediate(() => {
      this.turnStart = -1;
    });
  }
}
