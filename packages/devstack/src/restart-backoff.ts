/** How `npm start` spaces the restarts of a service process that keeps dying. */
export interface RestartPolicy {
  /** Wait before the first restart, ms. */
  firstMs: number;
  /** Longest wait; the wait doubles up to it, ms. */
  maxMs: number;
  /** A process that stayed healthy this long starts again from `firstMs`, ms. */
  resetAfterMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { firstMs: 1_000, maxMs: 30_000, resetAfterMs: 60_000 };

/**
 * The wait before the next restart: the first wait after a healthy run of at least
 * `resetAfterMs` (or the first death), else double the previous wait, capped. `healthyForMs` is
 * how long the process that just died had been healthy (0 when it never got healthy).
 */
export function nextRestartDelay(
  previousMs: number | undefined,
  healthyForMs: number,
  policy: RestartPolicy = DEFAULT_RESTART_POLICY,
): number {
  if (previousMs === undefined || healthyForMs >= policy.resetAfterMs) return policy.firstMs;
  return Math.min(policy.maxMs, previousMs * 2);
}

/** "2 s", "500 ms": how a wait reads in the restart message. */
export function formatDelay(ms: number): string {
  return ms >= 1_000 && ms % 1_000 === 0 ? `${ms / 1_000} s` : ms >= 1_000 ? `${(ms / 1_000).toFixed(1)} s` : `${ms} ms`;
}
