import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Milliseconds of synchronous work one request's parsing may do before it lets the event loop
 * turn. Small enough that a hostile request adds at most a few ms to every other request's wait
 * (the goal, docs/security.md: no request shape holds the loop 50 ms beyond idle), large enough
 * that an ordinary body is read in one go.
 */
export const SLICE_MS = 4;

/**
 * Time-slices long synchronous work (parsing a large body, building a large reply): `due()` says
 * whether this slice is used up, `pause()` lets other callbacks run and starts a new slice.
 * `await budget.maybePause()` in a loop keeps any one stretch to about SLICE_MS.
 */
export class LoopBudget {
  private sliceStart = performance.now();
  private readonly sliceMs: number;

  constructor(sliceMs = SLICE_MS) {
    this.sliceMs = sliceMs;
  }

  due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  async pause(): Promise<void> {
    await nextTurn();
    this.sliceStart = performance.now();
  }

  async maybePause(): Promise<void> {
    if (this.due()) await this.pause();
  }
}
