import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { escapeControls, formatLogLine } from "./log-format.ts";
import { placedCommand } from "./placement.ts";

export interface ChildOptions {
  /** Short name used as the log prefix, e.g. `gateway-1`. */
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Where output goes: `inherit-prefixed` writes `[name] line` to our stdout; a path writes a log file. */
  output: "prefixed" | { file: string };
  /** What `stop()` sends first; default SIGTERM (PostgreSQL wants SIGINT, its fast shutdown, not a wait for clients). */
  stopSignal?: NodeJS.Signals;
  /** How long `stop()` waits after `stopSignal` before SIGKILL, ms; default 10 000. */
  stopGraceMs?: number;
  /** Run as this user (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  /** Run in this Linux network namespace (a host of the multi-host test bed); see placement.ts. */
  netns?: string | undefined;
}

const TAIL_LINES = 30;

/** The last `n` lines of a log file, controls escaped, or a note that it cannot be read (for error messages). */
export function lastLinesOf(file: string, n: number): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-n).map(escapeControls).join("\n");
  } catch (err) {
    return `(${file} cannot be read: ${(err as Error).message})`;
  }
}

/** Every child still running, so that an impatient second Ctrl-C can kill them all at once. */
const live = new Set<Child>();

/** SIGKILLs every child process (group) that is still running; for an exit that cannot wait. */
export function killEveryChild(): void {
  for (const c of live) c.signal("SIGKILL");
}

const COLOURS = [36, 33, 35, 32, 34, 91, 92, 93, 94, 95];
let colourIndex = 0;

/**
 * A supervised child process. `stop()` sends SIGTERM (or `stopSignal`), waits, then SIGKILL; it
 * is idempotent.
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
  private readonly stopSignal: NodeJS.Signals;
  private readonly stopGraceMs: number;

  constructor(opts: ChildOptions) {
    this.name = opts.name;
    this.stopSignal = opts.stopSignal ?? "SIGTERM";
    this.stopGraceMs = opts.stopGraceMs ?? 10_000;
    const placed = placedCommand(opts.command, opts.args, opts.netns, opts);
    this.proc = spawn(placed.command, placed.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...placed.spawnIds,
    });
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.proc.once("exit", (code, signal) => {
        live.delete(this);
        this.exitSignal = signal;
        this.exitCode = code ?? (signal ? null : 0);
        resolve(this.exitCode);
      });
      this.proc.once("error", () => {
        live.delete(this);
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
        // Escaped: the tail goes into error messages printed to the operator's terminal.
        this.tail.push(escapeControls(line));
        if (this.tail.length > TAIL_LINES) this.tail.shift();
      });
    }
  }

  /** The last (up to 30) lines of the child's output, oldest first. */
  lastOutput(): string {
    return this.tail.join("\n");
  }

  /** How the child ended ("exit code 1", "signal SIGKILL"), or undefined while it runs. */
  get endedWith(): string | undefined {
    if (this.exitCode === undefined) return undefined;
    return this.exitSignal ? `signal ${this.exitSignal}` : `exit code ${this.exitCode}`;
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

  async stop(graceMs = this.stopGraceMs): Promise<void> {
    if (!this.running) return;
    this.signal(this.stopSignal);
    const timer = setTimeout(() => this.signal("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
