/**
 * The bed's verdicts, from what the publisher, the receiver and the prober recorded: pure
 * functions over timestamps, unit-tested without a bed.
 */

/** The longest stretch of [from, to] with none of `times` in it (ms). */
export function longestGap(times: readonly number[], from: number, to: number): number {
  const inside = times.filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  let last = from;
  let longest = 0;
  for (const t of [...inside, to]) {
    longest = Math.max(longest, t - last);
    last = t;
  }
  return longest;
}

/** The first moment at or after `from` that one of `times` falls on, or undefined. */
export function firstAfter(times: readonly number[], from: number): number | undefined {
  let best: number | undefined;
  for (const t of times) if (t >= from && (best === undefined || t < best)) best = t;
  return best;
}

/** An eventId's sequence number within its topic (`<hash8>-<seq>-<block>`). */
export function seqOf(eventId: string): number {
  return Number(eventId.split("-")[1]);
}

export interface CallbackOrder {
  /** Callbacks of an event received before. */
  duplicates: number;
  /** First callbacks of an event whose topic sequence is below one already received. */
  outOfOrder: number;
}

/**
 * How callbacks (in arrival order) kept to the ledger's order, per topic (an eventId's first part
 * names its topic, its second the event's place in the topic).
 */
export function callbackOrder(eventIds: readonly string[]): CallbackOrder {
  const seen = new Set<string>();
  const highest = new Map<string, number>();
  let duplicates = 0;
  let outOfOrder = 0;
  for (const id of eventIds) {
    if (seen.has(id)) {
      duplicates++;
      continue;
    }
    seen.add(id);
    const topic = id.split("-")[0] as string;
    const seq = seqOf(id);
    const top = highest.get(topic) ?? Number.NEGATIVE_INFINITY;
    if (seq < top) outOfOrder++;
    highest.set(topic, Math.max(top, seq));
  }
  return { duplicates, outOfOrder };
}

export interface Sample {
  at: number;
  status: number;
  took: number;
  reason?: string;
}

export interface ReadinessExpectation {
  /** Services that lose what they need in this fault: each must answer non-200 within 5 s. */
  mustFail: readonly string[];
  /** Services whose host is cut off: their probes cannot answer, so their latency is not judged. */
  unreachable: readonly string[];
  /** Services started again after a kill: a start is no dependency coming back, so their way back is not judged. */
  restarted?: readonly string[];
}

/** How long after the fault a service first answered anything but 200 (ms), or undefined. */
function firstNotReady(samples: readonly Sample[], from: number, to: number): number | undefined {
  const hit = samples.find((s) => s.at >= from && s.at <= to && s.status !== 200);
  return hit ? hit.at - from : undefined;
}

/**
 * Whether readiness told the truth in one fault window: every service that lost what it needs
 * said so within 5 s, every reachable service answered each probe within 1 s, and every service
 * answered 200 again within `backMs` after the heal. Returns the problems, empty when truthful.
 */
export function judgeReadiness(
  samples: ReadonlyMap<string, readonly Sample[]>,
  window: { faultAt: number; healAt: number; endAt: number },
  expect: ReadinessExpectation,
  backMs: number,
): string[] {
  const problems: string[] = [];
  for (const [name, list] of samples) {
    if (expect.mustFail.includes(name)) {
      const after = firstNotReady(list, window.faultAt, window.healAt);
      if (after === undefined || after > 5_000)
        problems.push(`${name} said ready ${after === undefined ? "throughout" : `for ${(after / 1000).toFixed(1)} s`}`);
    }
    if (!expect.unreachable.includes(name)) {
      const slow = list.filter((s) => s.at >= window.faultAt && s.at <= window.endAt && s.status === 0).length;
      if (slow > 0) problems.push(`${name} left ${slow} probe(s) unanswered for 1 s`);
    }
    if (expect.restarted?.includes(name)) continue;
    const ready = list.filter((s) => s.status === 200 && s.at >= window.healAt).map((s) => s.at);
    const back = firstAfter(ready, window.healAt);
    if (back === undefined || back - window.healAt > backMs) {
      // The last reason before it was ready again (or the last one at all) says what held it.
      const held = list.filter((s) => s.status !== 200 && s.at >= window.healAt && (back === undefined || s.at < back)).at(-1);
      const why = held?.reason ? ` (${held.reason.slice(0, 160)})` : "";
      problems.push(
        `${name} ${back === undefined ? "not ready again" : `ready again only after ${((back - window.healAt) / 1000).toFixed(1)} s`}${why}`,
      );
    }
  }
  return problems;
}

/** One line of the bed's table. */
export interface ScenarioResult {
  scenario: string;
  acked: number;
  lost: number;
  renamed: number;
  /** Events stored twice (one idempotency key, two events). */
  duplicated: number;
  /** Longest gap without an acknowledged publish in the fault window and the recovery after it (ms). */
  publishGapMs: number;
  callbackGapMs: number;
  /** Acknowledged events no callback reached. */
  callbacksMissing: number;
  callbacksOutOfOrder: number;
  callbackDuplicates: number;
  readiness: string[];
  /** Goals missed, in words (availability and readiness); data goals are in `dataProblems`. */
  misses: string[];
  dataProblems: string[];
}

/** Whether a result breaks a data goal: something acknowledged lost, renamed, stored twice or delivered out of order. */
export function dataProblems(r: Omit<ScenarioResult, "misses" | "dataProblems" | "readiness">): string[] {
  const out: string[] = [];
  if (r.lost > 0) out.push(`${r.lost} acknowledged event(s) lost`);
  if (r.renamed > 0) out.push(`${r.renamed} acknowledged event(s) renamed`);
  if (r.duplicated > 0) out.push(`${r.duplicated} event(s) stored twice`);
  if (r.callbacksMissing > 0) out.push(`${r.callbacksMissing} acknowledged event(s) never called back`);
  if (r.callbacksOutOfOrder > 0) out.push(`${r.callbacksOutOfOrder} callback(s) out of order`);
  return out;
}

const secs = (ms: number) => (ms / 1000).toFixed(1);

/** The table `npm run test:partitions` prints. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const head = [
    "scenario",
    "acked",
    "lost",
    "renamed",
    "stored twice",
    "max s w/o ack",
    "max s w/o callback",
    "cb missing/out of order/dup",
    "readiness truthful",
  ];
  const rows = results.map((r) => [
    r.scenario,
    String(r.acked),
    String(r.lost),
    String(r.renamed),
    String(r.duplicated),
    secs(r.publishGapMs),
    secs(r.callbackGapMs),
    `${r.callbacksMissing}/${r.callbacksOutOfOrder}/${r.callbackDuplicates}`,
    r.readiness.length === 0 ? "yes" : `no: ${r.readiness.join("; ")}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}
