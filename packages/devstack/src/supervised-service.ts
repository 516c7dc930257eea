import type { Progress } from "./progress.ts";
import { DEFAULT_RESTART_POLICY, formatDelay, nextRestartDelay, type RestartPolicy } from "./restart-backoff.ts";
import { type ServiceProcessOptions, startServiceProcess } from "./service-process.ts";

/** What supervision needs of a child process (a `Child` has it). */
export interface SupervisedChild {
  readonly exited: Promise<number | null>;
  readonly exitSignal: NodeJS.Signals | null;
  stop(): Promise<void>;
}

export interface SupervisedServiceOptions extends ServiceProcessOptions {
  progress: Progress;
  policy?: RestartPolicy;
  now?: () => number;
  /** Starts the process and resolves once it is healthy; default `startServiceProcess`. */
  launch?: (opts: ServiceProcessOptions & { onSpawn: (c: SupervisedChild) => void }) => Promise<SupervisedChild>;
}

function howItEnded(child: SupervisedChild, code: number | null): string {
  return code === null ? `was killed by ${child.exitSignal ?? "a signal"}` : `exited with code ${code}`;
}

/**
 * A service process that `npm start` keeps running: once it has started, a death is announced
 * and followed by a restart after a backoff (1 s doubling to 30 s, from 1 s again after a
 * healthy minute). `stop()` ends it for good: nothing restarts during or after a shutdown.
 */
export class SupervisedService {
  readonly name: string;
  private readonly o: SupervisedServiceOptions;
  private readonly now: () => number;
  private child: SupervisedChild | undefined;
  private healthySince: number | undefined;
  private lastDelay: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopping = false;
  private restarts = 0;

  constructor(o: SupervisedServiceOptions) {
    this.o = o;
    this.name = o.name;
    this.now = o.now ?? Date.now;
  }

  /** The first start: resolves once healthy; a failure here is not retried (it is reported to the caller). */
  async start(): Promise<void> {
    this.adopt(await this.launch());
  }

  /** Stops the process and every pending restart; idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    await this.child?.stop();
  }

  private launch(): Promise<SupervisedChild> {
    return (this.o.launch ?? startServiceProcess)({
      ...this.o,
      onSpawn: (c: SupervisedChild) => {
        this.child = c;
      },
    });
  }

  private adopt(child: SupervisedChild): void {
    this.child = child;
    this.healthySince = this.now();
    void child.exited.then((code) => {
      if (this.stopping || this.child !== child) return;
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
      // The child's own last words were already echoed with its log prefix.
      const first = (err instanceof Error ? err.message : String(err)).split("\n")[0]?.replace(/; its last output:$/, "");
      this.scheduleRestart(`${this.name} did not come back: ${first}`);
    }
  }
}
