/** What every shape has: its sizes, its context, and the tally of its answers. */

/** How big each shape is: the documented limits (1 MiB body, 10,000 parameters or parts, 256 KiB head), or --quick's small sizes. */
export interface Sizes {
  /** F2 form bodies, bytes. */
  formBytes: number;
  /** F2 query string, bytes. */
  queryBytes: number;
  /** F3 one-byte chunks. */
  chunks: number;
  /** F4 pipelined requests. */
  pipeline: number;
  /** F4 baseline connections. */
  connections: number;
  /** F5 multipart parts (and form parameters of its baseline). */
  parts: number;
  /** F10 subscriptions, and at most this many per caller (source address). */
  subscriptions: number;
  perCaller: number;
  /** No answer (or close) within this long is a hang: a wrong answer. */
  hangMs: number;
  /** Length of the idle windows taken before the shapes. */
  idleMs: number;
  /** How long to wait for a gateway that does not answer (e.g. being restarted) before giving up. */
  aliveWaitMs: number;
}

const MiB = 1024 * 1024;

export function sizesFor(quick: boolean): Sizes {
  return quick
    ? {
        formBytes: 64 * 1024,
        queryBytes: 16 * 1024,
        chunks: 5_000,
        pipeline: 200,
        connections: 20,
        parts: 999,
        subscriptions: 40,
        perCaller: 20,
        hangMs: 3_000,
        idleMs: 250,
        aliveWaitMs: 10_000,
      }
    : {
        formBytes: MiB,
        queryBytes: 250 * 1024,
        chunks: 100_000,
        pipeline: 2_000,
        connections: 50,
        parts: 9_999,
        subscriptions: 1_500,
        // Under the per-caller subscription cap (MAX_SUBSCRIPTIONS_PER_CALLER, default 1,000).
        perCaller: 500,
        hangMs: 10_000,
        idleMs: 1_000,
        aliveWaitMs: 30_000,
      };
}

export interface ShapeContext {
  url: string;
  sizes: Sizes;
  say: (line: string) => void;
  /** Runs at the end of the run, whatever happened (e.g. removing the subscriptions a shape made). */
  onCleanup: (fn: () => Promise<void>) => void;
}

export interface Outcome {
  requests: number;
  answersOk: number;
  problems: string[];
  notes?: string[];
}

export interface Shape {
  name: string;
  /** The finding it replays: F1 … F10. */
  family: string;
  /** A same-run comparison for another shape, not held to the goal. */
  baseline?: boolean;
  /** One line for the progress output: what is sent, at these sizes. */
  what: (s: Sizes) => string;
  /** Outside the measured window: setting up what the shape needs. A throw fails the shape. */
  prepare?: (ctx: ShapeContext) => Promise<void>;
  run: (ctx: ShapeContext) => Promise<Outcome>;
}

/** Counts answers; keeps the first few wrong ones word for word and counts the rest. */
export class Tally {
  requests = 0;
  answersOk = 0;
  private readonly problems: string[] = [];
  private unshown = 0;

  /** One request's verdict: undefined when answered right, else what was wrong. */
  record(problem: string | undefined): void {
    this.requests++;
    if (problem === undefined) this.answersOk++;
    else if (this.problems.length < 3) this.problems.push(problem);
    else this.unshown++;
  }

  /** A problem of the shape as a whole (e.g. answers missing), not of one request. */
  fail(problem: string): void {
    this.problems.push(problem);
  }

  outcome(notes: string[] = []): Outcome {
    const problems = this.unshown > 0 ? [...this.problems, `… and ${this.unshown} more wrong answers`] : [...this.problems];
    return { requests: this.requests, answersOk: this.answersOk, problems, notes };
  }
}

/** An answer's start, on one line, for a message. */
export function snippet(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 160 ? `${t.slice(0, 160)}…` : t || "(empty body)";
}

function isBrokerError(json: unknown): boolean {
  const o = json as { code?: unknown; message?: unknown } | null;
  return typeof o === "object" && o !== null && typeof o.code === "number" && typeof o.message === "string";
}

/** `rest/exist` answered as the interface does: 200, and `true`/`false` or a broker error `{code, message}`. */
export function existProblem(r: { status: number; json: unknown; text: string }, booleanOnly = false): string | undefined {
  if (r.status !== 200) return `answered HTTP ${r.status}: ${snippet(r.text)}`;
  if (typeof r.json === "boolean") return undefined;
  if (booleanOnly) return `answered ${snippet(r.text)}, not true/false: a request within the limits was refused`;
  return isBrokerError(r.json) ? undefined : `answered ${snippet(r.text)}, not an exist answer (true/false or {code, message})`;
}
