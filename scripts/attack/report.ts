/** What one run found: each shape's answers and loop delay against the idle maximum, as a table and an exit code. */

/** The goal: no shape holds the gateway's event loop more than this beyond the idle maximum. */
export const GOAL_EXCESS_MS = 50;

export interface ShapeRow {
  name: string;
  /** The finding the shape replays (F1 …), "idle" for the idle row. */
  family: string;
  /** A same-run comparison for another shape: printed, never counted against the goal. */
  baseline: boolean;
  requests: number;
  /** Requests answered as they should be. */
  answersOk: number;
  /** Largest event-loop delay the gateway saw while the shape ran; undefined when it could not be read (gateway gone). */
  loopMaxMs: number | undefined;
  /** Wall time of the shape, ms. */
  ms: number;
  /** Wrong answers, a dead gateway, a hang: any entry fails the shape. */
  problems: string[];
  /** Remarks that fail nothing (e.g. a retry after the gateway restarted under us). */
  notes: string[];
}

interface JudgedRow extends ShapeRow {
  excessMs: number | undefined;
  /** Undefined when the delay is unknown. */
  withinGoal: boolean | undefined;
}

export interface Verdict {
  idleMaxMs: number;
  idleWindows: number;
  rows: JudgedRow[];
  /** Shapes (baselines included) answered wrongly or that left the gateway dead. */
  wrong: JudgedRow[];
  /** Shapes, not baselines, over the goal or whose delay could not be read. */
  overGoal: JudgedRow[];
  strict: boolean;
  exitCode: 0 | 1;
}

/** Judges each row against the idle maximum (the largest delay of the idle windows of the same run). */
export function judge(rows: readonly ShapeRow[], idleWindowsMs: readonly number[], strict: boolean): Verdict {
  const idleMaxMs = Math.max(0, ...idleWindowsMs);
  const idle: ShapeRow = {
    name: "idle",
    family: "idle",
    baseline: false,
    requests: 0,
    answersOk: 0,
    loopMaxMs: idleMaxMs,
    ms: 0,
    problems: [],
    notes: [`max of ${idleWindowsMs.length} idle windows`],
  };
  const judged = [idle, ...rows].map((r): JudgedRow => {
    const excessMs = r.loopMaxMs === undefined ? undefined : r.loopMaxMs - idleMaxMs;
    return { ...r, excessMs, withinGoal: excessMs === undefined ? undefined : excessMs <= GOAL_EXCESS_MS };
  });
  const wrong = judged.filter((r) => r.problems.length > 0);
  const overGoal = judged.filter((r) => !r.baseline && r.withinGoal !== true);
  const failed = wrong.length > 0 || (strict && overGoal.length > 0);
  return { idleMaxMs, idleWindows: idleWindowsMs.length, rows: judged, wrong, overGoal, strict, exitCode: failed ? 1 : 0 };
}

const ms = (v: number | undefined) => (v === undefined ? "?" : v.toFixed(1));

function goalCell(r: JudgedRow): string {
  if (r.family === "idle") return "–";
  const yn = r.withinGoal === undefined ? "unknown" : r.withinGoal ? "yes" : "no";
  return r.baseline ? `(${yn}, baseline)` : yn;
}

/** The table, one row per shape after the idle row, as Markdown so it pastes into a report. */
export function renderTable(v: Verdict): string {
  const header = [
    "shape",
    "requests",
    "answers ok",
    "max loop delay ms",
    "idle max ms",
    "excess ms",
    `within ${GOAL_EXCESS_MS} ms goal`,
    "shape ms",
  ];
  const body = v.rows.map((r) => [
    r.family === "idle" ? "idle" : `${r.family} ${r.name}`,
    String(r.requests),
    r.family === "idle" ? "–" : `${r.answersOk}/${r.requests}${r.problems.length > 0 ? " WRONG" : ""}`,
    ms(r.loopMaxMs),
    ms(v.idleMaxMs),
    r.family === "idle" ? "–" : ms(r.excessMs),
    goalCell(r),
    r.family === "idle" ? "–" : String(Math.round(r.ms)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...body.map(line)].join("\n");
}

/** What went wrong, shape by shape, and the notes: printed under the table. */
export function renderFindings(v: Verdict): string[] {
  const out: string[] = [];
  for (const r of v.rows) {
    for (const p of r.problems) out.push(`WRONG ${r.family} ${r.name}: ${p}`);
    for (const n of r.notes) if (r.family !== "idle") out.push(`note  ${r.family} ${r.name}: ${n}`);
  }
  return out;
}

/** The closing line: the goal's verdict and the answers' verdict in one sentence, and what the exit code means. */
export function closingLine(v: Verdict): string {
  const shapes = v.rows.filter((r) => r.family !== "idle" && !r.baseline).length;
  const goal =
    v.overGoal.length === 0
      ? `all ${shapes} shapes within ${GOAL_EXCESS_MS} ms of the idle max (${ms(v.idleMaxMs)} ms)`
      : `${v.overGoal.length} of ${shapes} shapes over ${GOAL_EXCESS_MS} ms beyond the idle max (${ms(v.idleMaxMs)} ms): ${v.overGoal.map((r) => r.name).join(", ")}`;
  const answers =
    v.wrong.length === 0
      ? "every answer right and the gateway alive"
      : `${v.wrong.length} answered wrongly: ${v.wrong.map((r) => r.name).join(", ")}`;
  const exit = v.exitCode === 0 ? "exit 0" : `exit 1 (${v.wrong.length > 0 ? "wrong answers" : "over the goal, --strict"})`;
  return `${goal}; ${answers}; ${exit}`;
}
