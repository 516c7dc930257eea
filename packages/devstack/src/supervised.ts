import type { Progress } from "./progress.ts";
import { DEFAULT_RESTART_POLICY, formatDelay, nextRestartDelay, type RestartPolicy } from "./restart-backoff.ts";

/** What supervision needs of a child process (a `Child` has it). */
export interface SupervisedChild {
  readonly exited: Promise<number | null>;
  readonly exitSignal: NodeJS.Signals | null;
  stop(): Promise<void>;
}

export interface SupervisedOptions<C extends SupervisedChild> {
  /** Names the process in every message, e.g. `indexer-1`, `kafka-2`, `postgres`. */
  name: string;
  progress: Progress;
  /**
   * Starts the process and resolves once it is healthy; rejects when it dies or never gets
   * healthy (after ending it). Tells `onSpawn` the process as soon as it exists, so that a
   * `stop()` in the middle of a start ends it too.
   */
  launch: (onSpawn: (child: C) => void) => Promise<C>;
  /** Restart a process that dies (default). False: a death is left alone, as failure tests want. */
  restart?: boolean;
  policy?: RestartPolicy;
  now?: () => number;
}

/** "exited with code 1", "was killed by SIGKILL": how a process's end reads in every message. */
export function howItEnded(child: SupervisedChild, code: number | null): string {
  return code === null ? `was killed by ${child.exitSignal ?? "a signal"}` : `exited with code ${code}`;
}

/**
 * One process that `npm start` keeps running, whatever it is (a service, a Kafka broker, a
 * private Postgres or Redis): once it has started, a death is announced and followed by a
 * restart after a backoff (1 s doubling to 30 s, from 1 s again after a healthy minute).
 * `stop()` ends it for good at any moment, also in the middle of a start or a restart:
 * nothing restarts during or after a shutdown.
 */
export class Supervised<C extends SupervisedChild = SupervisedChild> {
  readonly name: string;
  private readonly o: SupervisedOptions<C>;
  private readonly now: () => number;
  private current: C | undefined;
  private healthySince: number | undefined;
  private lastDelay: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private restarts = 0;

  constructor(o: SupervisedOptions<C>) {
    this.o = o;
    this.name = o.name;
    this.now = o.now ?? Date.now;
  }

  /** The process now running (or starting), if any. */
  get child(): C | undefined {
    return this.current;
  }

  /**
   * Starts the process and resolves once healthy; a failure here is not retried (it is the
   * caller's to report). Also starts again a process that died unsupervised (`restart: false`).
   */
  async start(): Promise<void> {
    if (this.stopping) throw new Error(`${this.name} was stopped before it could start`);
    const child = await this.launch();
    if (this.stopping) {
      await child.stop();
      throw new Error(`${this.name} was stopped while it started`);
    }
    this.adopt(child);
  }

  /** Stops the process and every pending restart; idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.current?.stop();
  }

  private launch(): Promise<C> {
    return this.o.launch((c) => {
      this.current = c;
    });
  }

  private adopt(child: C): void {
    this.current = child;
    this.healthySince = this.now();
    void child.exited.then((code) => {
      if (this.stopping || this.current !== child || this.o.restart === false) return;
      this.scheduleRestart(`${this.name} ${howItEnded(child, code)}`);
    });
  }

  private scheduleRestart(what: string): void {
    const healthyFor = this.healthySince === undefined ? 0 : this.now() - this.healthySince;
    this.healthySince = undefined;
    const delay = nextRestartDelay(this.lastDelay, healthyFor, this.o.policy ?? DEFAULT_RESTART_POLICY);
    this.lastDelay = delay;
    this.o.progress(`${what}; restarting in ${formatDelay(delay)}`);
    this.timer = setTimeout(() => void this.restart(), delay);
  }

  private async restart(): Promise<void> {
    if (this.stopping) return;
    try {
      const child = await this.launch();
      if (this.stopping) {
        await child.stop();
        return;
      }
      this.restarts++;
      this.o.progress(`${this.name} is running again (restart ${this.restarts})`);
      this.adopt(child);
    } catch (err) {
      if (this.stopping) return;
      // The child's own last words were already echoed with its log prefix (services) or are
      // in its log file (infrastructure); the first line says what happened.
      const first = (err instanceof Error ? err.message : String(err)).split("\n")[0]?.replace(/; its last output:$/, "");
      this.scheduleRestart(`${this.name} did not come back: ${first}`);
    }
  }
}
