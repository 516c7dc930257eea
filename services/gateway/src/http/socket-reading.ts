import type { Duplex } from "node:stream";

/**
 * Stopping a connection's reads in a way Node's HTTP server cannot undo. Node resumes a paused
 * socket on its own (when a request body is read, when a pipelined answer drains), so a plain
 * `pause()` lasts only until the next such event; while a hold is on, the socket's `resume` is a
 * no-op and only the last release (or nothing, for a stop) resumes it for real. While reads are
 * held, llhttp parses nothing more: that is what bounds the work a flood of pipelined requests or
 * body chunks can make in one event-loop turn (the kernel buffers the rest, and TCP pushes back on
 * the sender).
 */
interface Reading {
  holds: number;
  stopped: boolean;
  resume: () => Duplex;
}
const reading = new WeakMap<Duplex, Reading>();

function stateOf(socket: Duplex): Reading {
  let r = reading.get(socket);
  if (!r) {
    const original = socket.resume.bind(socket);
    r = { holds: 0, stopped: false, resume: original };
    reading.set(socket, r);
    const state = r;
    socket.resume = function heldResume(this: Duplex) {
      if (state.holds === 0 && !state.stopped) return original();
      return this;
    };
  }
  return r;
}

/** Stops reading `socket` until every hold is released. */
export function holdReading(socket: Duplex): void {
  const r = stateOf(socket);
  r.holds++;
  socket.pause();
}

/** Releases one hold; the last one resumes reading (and the HTTP parser, which Node may have paused meanwhile). */
export function releaseReading(socket: Duplex): void {
  const r = reading.get(socket);
  if (!r || r.holds === 0) return;
  r.holds--;
  if (r.holds > 0 || r.stopped || socket.destroyed) return;
  const s = socket as Duplex & { _paused?: boolean; parser?: { resume(): void } | null };
  // Node pauses the parser itself only while it holds the socket for its own reasons (`_paused`);
  // then it resumes both when its reason ends, and it is not for us to do it earlier.
  if (!s._paused) {
    s.parser?.resume();
    r.resume();
  }
}

/** Reads nothing more from `socket`, ever: the connection is to end once its answers are out. */
export function stopReading(socket: Duplex): void {
  const r = stateOf(socket);
  r.stopped = true;
  socket.pause();
}
