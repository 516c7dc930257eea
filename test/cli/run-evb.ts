import { spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
/** The `evb` the workspace installs (node_modules/.bin/evb → packages/cli/bin/evb.js). */
export const EVB_BIN = join(ROOT, "node_modules", ".bin", "evb");
/** PATH with the workspace's Node 24 first, which the bin's `#!/usr/bin/env node` picks up. */
export const EVB_PATH = `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH ?? ""}`;

export interface EvbRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `evb` binary as a child process, optionally feeding standard input. */
export function runEvb(args: string[], opts: { env?: Record<string, string>; input?: string } = {}): Promise<EvbRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(EVB_BIN, args, { env: { ...process.env, PATH: EVB_PATH, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}
