import type { Logger } from "@evb/domain";

/**
 * The latest answer of a background check: `ok` with what the look returned, or why not. `at` is
 * when it was decided (null: no look has answered yet, the reason says "checking").
 */
export type Checked<T> = { ok: true; value: T; at: number } | { ok: false; reason: string; at: number | null };

export interface BackgroundCheckOptions<T> {
  /** What is checked, as log lines name it ("Postgres", "Redis"). */
  name: string;
  /** One look; rejects when the part is not there. It should bound itself too (a client timeout). */
  run: () => Promise<T>;
  /** Time between the starts of two looks, ms. */
  intervalMs: number;
  /** A look unanswered this long counts as failed, ms; the next one starts at the next interval. */
  timeoutMs: number;
  /** Told when the answer turns from failed (or none yet) to ok, and from ok (or none yet) to failed. */
  onChange?: (state: Checked<T>) => void;
  /** Releases what `run` uses (its own connection), on close. */
  release?: () => Promise<void> | void;
  logger?: Logger;
  now?: () => number;
}

/** The reason before the first look has answered. */
export const NOT_CHECKED_YET = "checking (no answer yet)";

/**
 * Looks abandoned after their timeout that have not settled yet; past this many no new look
 * starts, so a `run` that never settles cannot pile up (its answer stays "no answer").
 */
const MAX_UNSETTLED = 3;

/**
 * Asks one dependency in the background, one look at a time, every `intervalMs`, and keeps the
 * latest answer, so that a readiness probe only reads (`state()`) and never waits on the network.
 * A look that outlives `timeoutMs` fails ("no answer within …") and is abandoned: its late answer
 * is ignored, and the next interval starts a fresh one, so that a reason is never older than
 * an interval plus the timeout and clears as soon as the dependency answers again.
 * State changes are logged once, not once per look.
 */
export class BackgroundCheck<T> {
  private readonly o: BackgroundCheckOptions<T>;
  private readonly now: () => number;
  private latest: Checked<T> = { ok: false, reason: NOT_CHECKED_YET, at: null };
  /** Id of the latest look; an answer of an older one is late and ignored. */
  private attempt = 0;
  private inFlight = false;
  private unsettled = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private first: Promise<void> | undefined;
  private answered: () => void = () => {};

  constructor(o: BackgroundCheckOptions<T>) {
    this.o = o;
    this.now = o.now ?? Date.now;
  }

  /** Looks at once, then every interval; resolves once the first look answered or timed out (idempotent). */
  start(): Promise<void> {
    if (this.first) return this.first;
    this.first = new Promise((resolve) => {
      this.answered = resolve;
    });
    this.tick();
    this.timer = setInterval(() => this.tick(), this.o.intervalMs);
    this.timer.unref();
    return this.first;
  }

  /** The latest answer; never waits. */
  state(): Checked<T> {
    return this.latest;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.answered();
    await this.o.release?.();
  }

  private tick(): void {
    if (this.closed || this.inFlight || this.unsettled >= MAX_UNSETTLED) return;
    const id = ++this.attempt;
    this.inFlight = true;
    this.unsettled++;
    const timer = setTimeout(() => this.settle(id, { ok: false, reason: `no answer within ${this.o.timeoutMs} ms` }), this.o.timeoutMs);
    timer.unref();
    let look: Promise<T>;
    try {
      look = this.o.run();
    } catch (err) {
      look = Promise.reject(err);
    }
    void look
      .then(
        (value): Answer<T> => ({ ok: true, value }),
        (err: unknown): Answer<T> => ({ ok: false, reason: err instanceof Error ? err.message : String(err) }),
      )
      .then((answer) => {
        this.unsettled--;
        clearTimeout(timer);
        this.settle(id, answer);
      });
  }

  private settle(id: number, answer: Answer<T>): void {
    // Only the latest look decides, and only once (its timeout or its answer, whichever came first).
    if (id !== this.attempt || !this.inFlight) return;
    this.inFlight = false;
    const was = this.latest;
    this.latest = { ...answer, at: this.now() };
    this.answered();
    if (this.closed) return;
    const first = was.at === null;
    if (!answer.ok && (first || was.ok))
      this.o.logger?.warn({ check: this.o.name, reason: answer.reason }, `${this.o.name} does not answer; not ready`);
    if (answer.ok && !first && !was.ok) this.o.logger?.info({ check: this.o.name }, `${this.o.name} answers again`);
    if (first || was.ok !== answer.ok) this.o.onChange?.(this.latest);
  }
}

type Answer<T> = { ok: true; value: T } | { ok: false; reason: string };
