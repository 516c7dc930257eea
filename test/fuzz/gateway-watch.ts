import { rawCall } from "../support/raw-http.ts";
import { Scrape } from "../support/scrape.ts";
import type { TestSystem } from "../support/system.ts";

/**
 * A /health on another connection beside a heavy case must answer within this: the gateway time
 * slices frame and packet handling (~4 ms slices), so anything near a second is a held loop, not
 * a busy machine. Generous, as the two-core machine runs another suite beside this one.
 */
export const LOOP_BOUND_MS = 2_000;

/** What the gateway process does beside a case: how long it held its loop, how much memory it took. */
export interface Vitals {
  /** Max event-loop delay since the previous scrape (prom-client resets it per scrape), ms. */
  loopLagMs: number;
  rssBytes: number;
}

/** One scrape of the gateway's /metrics: event-loop delay (max since the last scrape) and resident memory. */
export async function vitals(base: string): Promise<Vitals> {
  const s = await Scrape.of(base);
  return {
    loopLagMs: Math.round((s.value("evb_nodejs_eventloop_lag_max_seconds") ?? 0) * 1000),
    rssBytes: s.value("evb_process_resident_memory_bytes") ?? 0,
  };
}

/** Why the gateway is not well after a case (a /health that fails, an exited process), or null. */
export async function healthProblem(base: string, sys: TestSystem): Promise<string | null> {
  const h = await rawCall(base, { path: "/health", timeoutMs: 10_000 }).catch((err: unknown) => String(err));
  const dead = sys.exitedProcesses();
  if (dead.length > 0) return `process exited: ${dead.join(", ")}`;
  if (typeof h === "string") return `gateway no longer answers /health (${h})`;
  return h.status === 200 ? null : `/health answered ${h.status}`;
}

/** The slowest of back-to-back /health requests on other connections while `pending` runs; -1 when one went unanswered within `boundMs`. */
export async function slowestHealthWhile(base: string, pending: Promise<unknown>, boundMs = LOOP_BOUND_MS): Promise<number> {
  let done = false;
  const stop = () => {
    done = true;
  };
  pending.then(stop, stop);
  let slowest = 0;
  while (!done) {
    const t0 = Date.now();
    const h = await rawCall(base, { path: "/health", timeoutMs: boundMs }).catch(() => undefined);
    if (h?.status !== 200) return -1;
    slowest = Math.max(slowest, Date.now() - t0);
    await new Promise((r) => setTimeout(r, 20));
  }
  return slowest;
}

/** Keeps the worst figures seen over a suite, printed at its end. */
export class WorstSeen {
  private health = { ms: 0, note: "" };
  private lag = { ms: 0, note: "" };

  note(what: string, healthMs: number, lagMs: number): void {
    if (healthMs > this.health.ms) this.health = { ms: healthMs, note: what };
    if (lagMs > this.lag.ms) this.lag = { ms: lagMs, note: what };
  }

  toString(): string {
    return `slowest /health beside a heavy case ${this.health.ms} ms (${this.health.note}); max event-loop delay ${this.lag.ms} ms (${this.lag.note})`;
  }
}

/**
 * Restarts whatever died during a case, so one crash does not hide the next case's finding, and
 * says what died. A crashed gateway refuses connections a moment before its exit is seen.
 */
export async function reviveDead(base: string, sys: TestSystem): Promise<string[]> {
  for (let i = 0; i < 30 && sys.exitedProcesses().length === 0 && (await healthProblem(base, sys)) !== null; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const dead = sys.exitedProcesses();
  for (const name of dead) await sys.restart(name);
  return dead;
}

/** One protocol fuzz case as both suites run it: its exchange, what the protocol's judge says of it, and an ordinary session afterwards. */
export interface CaseRun<E> {
  base: string;
  sys: TestSystem;
  worst: WorstSeen;
  note: string;
  /** A flood: time a /health beside it. */
  heavy: boolean | undefined;
  exchange: Promise<E>;
  judge: (ex: E) => string | null;
  /** Whether an ordinary session of the protocol still works; null when it does. */
  session: () => Promise<string | null>;
}

/**
 * What went wrong with one case, then whether the gateway still serves HTTP (a /health beside a
 * flood within the loop bound, one after it) and an ordinary session; null when nothing did.
 */
export async function caseProblems<E>(r: CaseRun<E>): Promise<string | null> {
  const [ex, held] = await Promise.all([r.exchange, r.heavy ? slowestHealthWhile(r.base, r.exchange) : Promise.resolve(0)]);
  const { loopLagMs } = await vitals(r.base);
  r.worst.note(r.note.slice(0, 60), held, loopLagMs);
  const problems = [
    r.judge(ex),
    held < 0 ? "a /health beside it went unanswered within the loop bound" : null,
    await healthProblem(r.base, r.sys),
    await r.session(),
  ].filter((p) => p !== null);
  return problems.length === 0 ? null : problems.join("; ");
}
