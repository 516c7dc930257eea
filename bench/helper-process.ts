/** The bench's own helper processes (baseline servers, receiver, open-loop generator), started with this Node. */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";

const script = (name: string) => join(import.meta.dirname, name);

export interface Helper {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/** Starts `bench/<name>` and resolves once it prints `listening <port>`. */
export function startHelper(name: string, args: string[]): Promise<Helper> {
  const child = spawn(process.execPath, [script(name), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${name} exited ${code} before listening`)));
    createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> }).on("line", (line) => {
      const m = /^listening (\d+)$/.exec(line);
      if (!m) return;
      resolve({
        port: Number(m[1]),
        pid: child.pid as number,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    });
  });
}

/** Runs `bench/<name> <json>` to its end and parses the JSON line it prints. */
export function runJsonHelper<T>(name: string, settings: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script(name), JSON.stringify(settings)], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`${name} exited ${code}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").pop() ?? "") as T);
      } catch (e) {
        reject(e);
      }
    });
  });
}
