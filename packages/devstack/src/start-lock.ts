import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** Whether a process of ours with this pid runs (signal 0 reaches it). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * One `npm start` at a time per stack folder: a file holding the pid of the process that took
 * it. A second start finds the holder alive and says so instead of fighting over ports; a file
 * left by a process that died (SIGKILL) is taken over.
 */
export class StartLock {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  /** Takes the lock for this process; when another live process holds it, takes nothing and returns that pid. */
  take(pid = process.pid): number | undefined {
    mkdirSync(dirname(this.path), { recursive: true });
    const holder = (() => {
      try {
        return Number(readFileSync(this.path, "utf8"));
      } catch {
        return undefined;
      }
    })();
    if (holder !== undefined) {
      if (holder !== pid && alive(holder)) return holder;
      rmSync(this.path, { force: true });
    }
    const fd = openSync(this.path, "wx");
    writeSync(fd, String(pid));
    closeSync(fd);
    return undefined;
  }

  /** Gives the lock up (idempotent). */
  release(): void {
    rmSync(this.path, { force: true });
  }
}
