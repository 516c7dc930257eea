import { httpGet } from "./http-get.ts";
import type { Progress } from "./progress.ts";

/** What a service's `/readyz` said: ready, or the reason it gives (or why it could not be asked). */
export interface ReadinessAnswer {
  ok: boolean;
  reason?: string;
}

/**
 * A service's readiness: 200 from `<origin>/readyz`, or the reason it gives. Over node:http
 * (`httpGet`), never fetch, which refuses ports such as 10080 outright.
 */
export async function readiness(origin: string, timeoutMs = 2_000): Promise<ReadinessAnswer> {
  try {
    const res = await httpGet(`${origin}/readyz`, timeoutMs);
    if (res.status === 200) return { ok: true };
    const reason = (() => {
      try {
        return (JSON.parse(res.body) as { reason?: unknown }).reason;
      } catch {
        return undefined;
      }
    })();
    return { ok: false, reason: typeof reason === "string" ? reason : `HTTP ${res.status}` };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

export interface UntilReadyOptions {
  /** Checked before each round: true ends the wait (a stop has begun). */
  stopped: () => boolean;
  progress: Progress;
  /** After this long the reasons of the services still not ready are printed once, and the wait goes on; default 60 s. */
  patienceMs?: number;
  /** Pause between rounds; default 250 ms. */
  pollMs?: number;
}

/**
 * Waits until every service answers its `/readyz` with 200, or `stopped()`. A service can be
 * alive but not ready for a reason that will not pass by itself (an indexer refusing a log);
 * after `patienceMs` that reason is printed and the wait goes on, rather than stopping a stack
 * that runs.
 */
export async function untilReady(services: ReadonlyArray<{ name: string; origin: string }>, o: UntilReadyOptions): Promise<void> {
  const patienceMs = o.patienceMs ?? 60_000;
  const deadline = Date.now() + patienceMs;
  let told = false;
  while (!o.stopped()) {
    const states = await Promise.all(services.map(async (s) => ({ ...s, ...(await readiness(s.origin)) })));
    const waiting = states.filter((s) => !s.ok);
    if (waiting.length === 0) return;
    if (!told && Date.now() > deadline) {
      told = true;
      o.progress(
        `running, but not ready after ${Math.round(patienceMs / 1000)} s (still waiting): ${waiting.map((s) => `${s.name}: ${s.reason}`).join("; ")}`,
      );
    }
    await new Promise((r) => setTimeout(r, o.pollMs ?? 250));
  }
}
