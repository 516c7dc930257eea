import { AsyncResource } from "node:async_hooks";
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { tracingOn } from "@evb/telemetry";
import { SLICE_MS } from "./loop-budget.ts";
import { holdReading, releaseReading } from "./socket-reading.ts";

/** Requests waiting on one connection above which it is read no further until they are taken. */
const PIPELINE_HOLD = 32;

/**
 * Requests of one connection being handled at once. Pipelining lets a client put thousands of
 * requests on one connection; started together they queued thousands of Postgres queries in
 * front of every other caller's (a `/health` on another connection waited over a second). More
 * than this many waits its turn.
 */
const IN_FLIGHT_PER_CONNECTION = 8;

interface Line {
  waiting: (() => void)[];
  running: number;
}

/**
 * Starts requests fairly and in slices. Node's parser emits every request of a read at once
 * (libuv reads up to 32 × 64 KiB per turn): 2,000 pipelined GETs in one write were 2,000 handlers
 * started in one turn and held the loop for seconds. So at most about SLICE_MS of handlers start
 * per event-loop turn; at most IN_FLIGHT_PER_CONNECTION requests of one connection are handled at
 * once; the rest wait in their connection's line, and lines are served round-robin, one request
 * from each connection in turn, so one connection's flood starves no other. A connection with more
 * than PIPELINE_HOLD waiting is not read until they start. Its answers still go out complete and in
 * order: Node keeps that order whatever order the handlers finish in.
 */
export class RequestScheduler {
  private readonly lines = new Map<Duplex, Line>();
  private turnStart = -1;
  private draining = false;
  private readonly sliceMs: number;
  private readonly perConnection: number;

  constructor(sliceMs = SLICE_MS, perConnection = IN_FLIGHT_PER_CONNECTION) {
    this.sliceMs = sliceMs;
    this.perConnection = perConnection;
  }

  /**
   * Runs `start` now when this turn has time left and the connection has nothing waiting and room
   * in flight; otherwise queues it. The request counts as in flight until `res` closes.
   */
  admit(socket: Duplex, res: ServerResponse, start: () => void): void {
    let line = this.lines.get(socket);
    if (!line) {
      line = { waiting: [], running: 0 };
      this.lines.set(socket, line);
    }
    const run = () => {
      (line as Line).running++;
      res.once("close", () => this.finished(socket, line as Line));
      start();
    };
    if (line.waiting.length === 0 && line.running < this.perConnection && this.withinSlice()) {
      run();
      return;
    }
    // A queued request starts in a later turn: with tracing on it keeps its own context (its
    // HTTP server span), not the context of whatever turn starts it.
    line.waiting.push(tracingOn() ? AsyncResource.bind(run) : run);
    if (line.waiting.length === PIPELINE_HOLD + 1) holdReading(socket);
    this.scheduleDrain();
  }

  private finished(socket: Duplex, line: Line): void {
    line.running--;
    if (line.waiting.length > 0) this.scheduleDrain();
    else if (line.running === 0) this.lines.delete(socket);
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
    // Passes over the connections, one request from each that has room, until a pass starts
    // nothing or the slice is used (at least one request per turn, however small the slice).
    let started = true;
    let sliceUsed = false;
    while (started && !sliceUsed) {
      started = false;
      for (const [socket, line] of [...this.lines]) {
        if (socket.destroyed) {
          // Its answers can no longer be sent and Node has aborted its requests: none is started.
          if (line.waiting.length > PIPELINE_HOLD) releaseReading(socket);
          line.waiting = [];
          if (line.running === 0) this.lines.delete(socket);
          continue;
        }
        if (line.waiting.length === 0 || line.running >= this.perConnection) continue;
        const next = line.waiting.shift() as () => void;
        if (line.waiting.length === PIPELINE_HOLD) releaseReading(socket);
        // To the back of the line of connections: the next turn begins with another one.
        this.lines.delete(socket);
        this.lines.set(socket, line);
        next();
        started = true;
        if (performance.now() - start >= this.sliceMs) {
          sliceUsed = true;
          break;
        }
      }
    }
    this.draining = false;
    // More to start now (the slice ran out): next turn. Lines at their in-flight limit resume
    // when one of their requests finishes.
    if (sliceUsed && [...this.lines.values()].some((l) => l.waiting.length > 0 && l.running < this.perConnection)) this.scheduleDrain();
    setImmediate(() => {
      this.turnStart = -1;
    });
  }
}
