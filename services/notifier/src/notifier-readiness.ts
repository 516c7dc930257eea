import { type Checked, checkReason } from "@evb/runtime";
import { type DispatchFailure, UNHEALTHY_AFTER_FAILURES } from "./dispatch/dispatcher.ts";
import type { StuckDispatch } from "./dispatch/dispatch-watch.ts";

/**
 * Ready while callbacks flow: Postgres and Redis answer (dispatch and delivery need both), the
 * delivery worker runs, and no group's dispatch keeps failing or stands still behind the ledger.
 * The reason names each part or group and what is wrong. Only reads: the stores are looked at in
 * the background (`BackgroundCheck`), so a probe is answered at once whatever is down.
 */
export function notifierReadiness(f: {
  /** The latest answers of the background checks. */
  postgres: Checked<unknown>;
  redis: Checked<unknown>;
  fatal: string | null;
  /** Every group whose dispatch is failing now; shown from the first failure, not ready from the third in a row. */
  failures: readonly DispatchFailure[];
  stuck: readonly StuckDispatch[];
  /** Why the ledger is not dispatched from nor delivered out of (LedgerGuard), or null. */
  ledger?: string | null;
}): { ok: boolean; reason?: string } & Record<string, unknown> {
  const reasons: string[] = [];
  for (const r of [checkReason("Postgres", f.postgres), checkReason("Redis", f.redis)])
    if (r !== null) reasons.push(`${r}: nothing is dispatched or delivered meanwhile`);
  if (f.fatal !== null) reasons.push(`${f.fatal} (the process exits so that it is restarted)`);
  if (f.ledger) reasons.push(`${f.ledger}: nothing is dispatched or delivered meanwhile`);
  for (const d of f.failures.filter((x) => x.failures >= UNHEALTHY_AFTER_FAILURES))
    reasons.push(`dispatch of group ${d.groupId} failed ${d.failures} times in a row: ${d.lastError}`);
  for (const s of f.stuck)
    reasons.push(
      `dispatch of group ${s.groupId} is stuck: its cursor has stayed at height ${s.cursorHeight} for ${Math.round(s.stillForMs / 1000)} s while the ledger is at height ${s.head}`,
    );
  const ok = reasons.length === 0;
  return {
    ok,
    ...(ok ? {} : { reason: reasons.join("; ") }),
    postgres: f.postgres.ok,
    redis: f.redis.ok,
    ...(f.fatal === null ? {} : { failed: f.fatal }),
    ...(f.failures.length === 0 ? {} : { dispatchFailures: f.failures }),
    ...(f.stuck.length === 0 ? {} : { stuckDispatch: f.stuck }),
  };
}
