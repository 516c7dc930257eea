import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import { formatLogLine } from "./log-format.ts";

export interface ChildOptions {
  /** Short name used as the log prefix, e.g. `gateway-1`. */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where output goes: `inherit-prefixed` writes `[name] line` to our stdout; a path writes a log file. */
  output: "prefixed" | { file: string };
}

const TAIL_LINES = 30;
const COLOURS = [36, 33, 35, 32, 34, 91, 92, 93, 94, 95];
let colourIndex = 0;

/**
 * A supervised child process. `stop()` sends SIGTERM, waits, then SIGKILL; it is idempotent.
 * Children are spawned in their own process group so that a Ctrl-C in the terminal reaches
 * only us, and we stop them in the order we choose.
 */
export class Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  /** The signal that ended the child, when one did. */
  exitSignal: NodeJS.Signals | null = null;
  /** The last lines the child wrote (stdout and stderr), for error messages about it. */
  private readonly tail: string[] = [];

  constructor(opts: ChildOptions) {
    this.name = opts.name;
    this.proc = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.exited = new Promise((resolve) => {
      this.proc.once("exit", (code, signal) => {
        this.exitSignal = signal;
        this.exitCode = code ?? (signal ? null : 0);
        resolve(this.exitCode);
      });
      this.proc.once("error", () => {
        this.exitCode = null;
        resolve(null);
      });
    });
    let echo: ((line: string) => void) | undefined;
    if (opts.output === "prefixed") {
      const colour = COLOURS[colourIndex++ % COLOURS.length];
      const tag = process.stdout.isTTY ? `\x1b[${colour}m[${opts.name}]\x1b[0m` : `[${opts.name}]`;
      echo = (line) => process.stdout.write(`${tag} ${formatLogLine(line)}\n`);
    } else {
      const file = createWriteStream(opts.output.file, { flags: "a" });
      this.proc.stdout?.pipe(file);
      this.proc.stderr?.pipe(file);
    }
    // One line reader per stream: it keeps the tail for error messages and, when prefixed, echoes.
    for (const stream of [this.proc.stdout, this.proc.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on("line", (line) => {
        echo?.(line);
        this.tail.push(line);
        if (this.tail.length > TAIL_LINES) this.tail.shift();
      });
    }
  }

  /** The last (up to 30) lines of the child's output, oldest first. */
  lastOutput(): string {
    return this.tail.join("\n");
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  /** Sends `signal` to the child's whole process group. */
  signal(signal: NodeJS.Signals): void {
    if (!this.running || this.proc.pid === undefined) return;
    try {
      process.kill(-this.proc.pid, signal);
    } catch {
      // already gone
    }
  }

  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.signal("SIGTERM");
    const timer = setTimeout(() => this.signal("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
