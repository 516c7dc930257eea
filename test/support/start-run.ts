import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

function read(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** Whether `pid` is a live process (a zombie counts as gone: it runs nothing). */
export function alive(pid: number): boolean {
  const stat = read(`/proc/${pid}/stat`);
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

export function readCmdline(pid: number): string {
  return read(`/proc/${pid}/cmdline`).split("\0").join(" ");
}

/** Every live descendant of `pid`. */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const stat = read(`/proc/${d}/stat`);
    if (stat === "") continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z") parentOf.set(Number(d), Number(fields[1]));
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) {
      if (parent === p) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return out;
}

/**
 * Every live process an `npm start` with STACK_DIR=`dir` started, found without asking it:
 * its command line names `dir` (the Kafka JVM, a private Postgres) or it inherited
 * STACK_DIR=`dir` (every child of npm start does, services included). Also finds processes that
 * outlived an npm start that exited, which its list of descendants no longer can.
 */
export function processesOf(dir: string): Array<{ pid: number; command: string }> {
  const out: Array<{ pid: number; command: string }> = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    const pid = Number(d);
    const command = readCmdline(pid);
    if ((command.includes(dir) || read(`/proc/${d}/environ`).split("\0").includes(`STACK_DIR=${dir}`)) && alive(pid)) {
      out.push({ pid, command });
    }
  }
  return out;
}

/** One `npm start` (scripts/start.ts) as a user runs it, with its output collected. */
export class StartRun {
  readonly proc: ChildProcess;
  output = "";
  readonly exited: Promise<number | null>;
  private readonly waiters = new Set<() => void>();

  constructor(env: NodeJS.ProcessEnv, args: string[] = []) {
    // In a process group of its own, as a shell runs a foreground job: see ctrlC().
    this.proc = spawn(process.execPath, [join(ROOT, "scripts", "start.ts"), ...args], {
      env,
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const collect = (d: Buffer) => {
      this.output += d.toString();
      for (const w of this.waiters) w();
    };
    this.proc.stdout?.on("data", collect);
    this.proc.stderr?.on("data", collect);
    // "close", not "exit": the last output lines may arrive after the exit.
    this.exited = new Promise((resolve) => this.proc.once("close", (code) => resolve(code)));
  }

  get pid(): number {
    return this.proc.pid as number;
  }

  /** The last `n` lines of the output, for failure messages (a stack prints thousands). */
  tail(n = 60): string {
    return this.output.split("\n").slice(-n).join("\n");
  }

  /** The first output line matching `re` (also one already printed); rejects when npm start exits first or after `timeoutMs`, a hang bound. */
  line(re: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const find = () => this.output.split("\n").find((l) => re.test(l));
      let done = false;
      const finish = (fn: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.waiters.delete(check);
        fn();
      };
      const check = () => {
        const l = find();
        if (l !== undefined) finish(() => resolve(l));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms; the output ends:\n${this.tail()}`))),
        timeoutMs,
      );
      this.waiters.add(check);
      check();
      void this.exited.then((code) => {
        check();
        finish(() => reject(new Error(`npm start exited with ${code} before a line matching ${re}; the output ends:\n${this.tail()}`)));
      });
    });
  }

  /**
   * Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group, so a
   * synchronous step npm start is waiting on (initdb, the Kafka storage format) gets it too.
   */
  ctrlC(): void {
    process.kill(-this.pid, "SIGINT");
  }

  /** SIGKILLs npm start if it still runs (afterAll: a failed test must not leave it behind). */
  kill(): void {
    if (alive(this.pid)) this.proc.kill("SIGKILL");
  }
}
