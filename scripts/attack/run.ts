/**
 * The run: idle windows, then each shape in its own measured window (scrape to reset the
 * gateway's loop-delay histogram, send, settle, scrape to read it), each followed by an idle
 * window of about its length, so the idle maximum is taken under the same conditions.
 */
import type { AttackOptions } from "./args.ts";
import { describeError, GatewayGone, idleWindow, livezProblem, SETTLE_MS, scrapeLoop, sleep, waitAlive } from "./probe.ts";
import { judge, type ShapeRow, type Verdict } from "./report.ts";
import { type Outcome, type Shape, type ShapeContext, sizesFor } from "./shape.ts";
import { CRASH_SHAPE, WIRE_SHAPES } from "./shapes.ts";
import { JSONRPC_SHAPES } from "./jsonrpc-shapes.ts";
import { liveFeedShapes } from "./live-feeds.ts";
import { listSubscriptionShapes } from "./subscriptions.ts";

/** Every shape in run order. F1 last: it crashed the gateway before the fix, and a crash must not hide the other figures. */
export function allShapes(): Shape[] {
  return [...WIRE_SHAPES, ...JSONRPC_SHAPES, ...listSubscriptionShapes(), ...liveFeedShapes(), CRASH_SHAPE];
}

const INITIAL_IDLE_WINDOWS = 3;
/** Interleaved idle windows are as long as the shape before them, within these bounds. */
const IDLE_MIN_MS = 200;
const IDLE_MAX_MS = 5_000;
/** Between a shape's window and the next idle one: the shape's leftovers (GC, closing sockets) settle. */
const QUIET_MS = 300;

export interface RunOptions extends AttackOptions {
  say?: (line: string) => void;
  /** Aborted: no further shape starts; what the shapes set up is still undone. */
  signal?: AbortSignal;
}

interface Measured {
  outcome: Outcome;
  loopMaxMs: number | undefined;
  ms: number;
  /** The gateway died during the window: it stopped answering, or a new process answers. */
  died: string | undefined;
}

/** One measured window around `shape.run`. */
async function measure(shape: Shape, ctx: ShapeContext): Promise<Measured> {
  const before = await scrapeLoop(ctx.url);
  const t0 = performance.now();
  const outcome = await shape.run(ctx);
  const ms = performance.now() - t0;
  await sleep(SETTLE_MS);
  let loopMaxMs: number | undefined;
  let died: string | undefined;
  try {
    const after = await scrapeLoop(ctx.url);
    if (after.processStart !== before.processStart) died = "a new gateway process answers after the shape: the one it was sent to exited";
    else loopMaxMs = after.loopMaxMs;
  } catch (err) {
    died = `/metrics does not answer after the shape: ${describeError(err)}`;
  }
  died ??= await livezProblem(ctx.url, 5_000);
  return { outcome, loopMaxMs, ms, died };
}

/**
 * One shape: prepared outside the window, measured, and run once more if the gateway died
 * meanwhile, as someone may have restarted it under us; dying twice is the shape's doing.
 */
async function runShape(shape: Shape, ctx: ShapeContext): Promise<{ row: ShapeRow; died: boolean }> {
  const row = (m: Partial<ShapeRow>) => ({ row: emptyRow(shape, m), died: false });
  /** `died`: the gateway died during some attempt, so what follows must not count as idle. */
  const judged = (m: Measured, died: boolean, notes: string[] = []) => ({
    died,
    row: emptyRow(shape, {
      ...m.outcome,
      loopMaxMs: m.loopMaxMs,
      ms: m.ms,
      problems: [...m.outcome.problems, ...(m.died ? [`the gateway died: ${m.died}`] : [])],
      notes: [...notes, ...(m.outcome.notes ?? [])],
    }),
  });

  await waitAlive(ctx.url, ctx.sizes.aliveWaitMs, ctx.say);
  const first = await prepareAndMeasure(shape, ctx);
  if ("setup" in first) return row({ problems: [first.setup] });
  if (first.died === undefined) return judged(first, false);

  ctx.say(`  the gateway died during ${shape.name} (${first.died}); once more if it comes back, in case it was restarted from outside`);
  try {
    await waitAlive(ctx.url, ctx.sizes.aliveWaitMs, ctx.say);
  } catch (err) {
    if (!(err instanceof GatewayGone)) throw err;
    return judged(first, true, [`it did not come back: ${err.message}`]);
  }
  const second = await prepareAndMeasure(shape, ctx);
  if ("setup" in second) return row({ problems: [second.setup] });
  return judged(second, true, [`first attempt: the gateway died (${first.died}); these figures are the second's`]);
}

async function prepareAndMeasure(shape: Shape, ctx: ShapeContext): Promise<Measured | { setup: string }> {
  try {
    await shape.prepare?.(ctx);
  } catch (err) {
    return { setup: `setting up failed: ${describeError(err)}` };
  }
  return measure(shape, ctx);
}

export interface AttackReport {
  verdict: Verdict;
  idleWindowsMs: number[];
}

/**
 * Runs the selected shapes (all when none is named) against the gateway at `opts.url`.
 * Throws GatewayGone when nothing answers there at the start.
 */
export async function runAttack(opts: RunOptions): Promise<AttackReport> {
  const say = opts.say ?? (() => {});
  const sizes = sizesFor(opts.quick);
  const cleanups: (() => Promise<void>)[] = [];
  const ctx: ShapeContext = { url: opts.url, sizes, say, onCleanup: (fn) => void cleanups.push(fn) };
  const selected = allShapes().filter((s) => opts.shapes.length === 0 || opts.shapes.includes(s.name));

  await waitAlive(opts.url, sizes.aliveWaitMs, say);
  await scrapeLoop(opts.url);
  const idleWindowsMs: number[] = [];
  say(`idle: ${INITIAL_IDLE_WINDOWS} windows of ${sizes.idleMs} ms`);
  for (let i = 0; i < INITIAL_IDLE_WINDOWS; i++) idleWindowsMs.push(await idleWindow(opts.url, sizes.idleMs));

  // What a family set up (F10's subscriptions) is undone when its last shape is done, so a later
  // shape that kills the gateway (F1, before the fix) cannot leave it behind.
  const undo = async () => {
    if (cleanups.length === 0) return;
    try {
      await waitAlive(opts.url, sizes.aliveWaitMs, say);
    } catch (err) {
      say(`  cleaning up anyway: ${describeError(err)}`);
    }
    for (const fn of cleanups.splice(0)) {
      try {
        await fn();
      } catch (err) {
        say(`  cleanup failed: ${describeError(err)}`);
      }
    }
  };
  const rows: ShapeRow[] = [];
  try {
    for (const [i, shape] of selected.entries()) {
      if (opts.signal?.aborted) {
        for (const rest of selected.slice(i)) rows.push(emptyRow(rest, { problems: ["not run: interrupted"] }));
        break;
      }
      say(`[${i + 1}/${selected.length}] ${shape.family} ${shape.name}: ${shape.what(sizes)}`);
      let r: ShapeRow;
      let died: boolean;
      try {
        ({ row: r, died } = await runShape(shape, ctx));
      } catch (err) {
        if (!(err instanceof GatewayGone)) throw err;
        // The gateway is not coming back: the rest cannot be measured, and say so rather than wait for each.
        for (const rest of selected.slice(i)) rows.push(emptyRow(rest, { problems: [`not run: ${err.message}`] }));
        break;
      }
      rows.push(r);
      say(
        `  ${r.answersOk}/${r.requests} answers ok, loop max ${r.loopMaxMs?.toFixed(1) ?? "?"} ms, ${Math.round(r.ms)} ms${r.problems.length ? `; WRONG: ${r.problems[0]}` : ""}`,
      );
      if (selected[i + 1]?.family !== shape.family) await undo();
      // A gateway that just (re)started is not idle: its start-up would inflate the idle maximum.
      if (died) continue;
      await sleep(QUIET_MS);
      try {
        await waitAlive(opts.url, Math.min(sizes.aliveWaitMs, 5_000), () => {});
        idleWindowsMs.push(await idleWindow(opts.url, Math.min(IDLE_MAX_MS, Math.max(IDLE_MIN_MS, r.ms))));
      } catch {
        // No idle window while the gateway is down; the next shape waits for it.
      }
    }
  } finally {
    await undo();
  }
  return { verdict: judge(rows, idleWindowsMs, opts.strict), idleWindowsMs };
}

function emptyRow(shape: Shape, m: Partial<ShapeRow>): ShapeRow {
  return {
    name: shape.name,
    family: shape.family,
    baseline: shape.baseline ?? false,
    requests: 0,
    answersOk: 0,
    loopMaxMs: undefined,
    ms: 0,
    problems: [],
    notes: [],
    ...m,
  };
}
