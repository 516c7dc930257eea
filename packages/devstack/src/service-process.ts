import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Child } from "./child.ts";
import { httpGet } from "./http-get.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
/** Loaded before every service (`--import`): starts OpenTelemetry when an OTLP endpoint is set. */
const TRACING_PRELOAD = pathToFileURL(join(ROOT, "packages", "telemetry", "src", "preload.ts")).href;

export type ServiceName = "gateway" | "indexer" | "notifier";

export interface ServiceProcessOptions {
  /** Log prefix, e.g. `indexer-2`. */
  name: string;
  service: ServiceName;
  env: Record<string, string>;
  /** Polled until it answers 200. */
  healthUrl: string;
  output: "prefixed" | { file: string };
  timeoutMs?: number;
  /** Extra Node options before the script (e.g. the bench's `--cpu-prof`, which NODE_OPTIONS may not carry). */
  nodeArgs?: readonly string[];
  /** The network namespace to run in (the multi-host test bed); unset: this machine's network. */
  netns?: string | undefined;
  /** Told the child as soon as it is spawned, before it is healthy (so that it can be stopped mid-start). */
  onSpawn?: (child: Child) => void;
}

/** A free TCP port on 127.0.0.1 (for services started by tests and `npm start`). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts one service as a child process (`node services/<name>/src/main.ts`) with the current
 * Node binary, and resolves once its health endpoint answers 200. Rejects when the child exits
 * first or the deadline passes, so a bad configuration fails fast with the child's own words.
 */
export async function startServiceProcess(opts: ServiceProcessOptions): Promise<Child> {
  const child = new Child({
    name: opts.name,
    command: process.execPath,
    // A timer for a deadline already past (negative) runs at once; Node 24 warns about it, which is noise.
    // The tracing preload does nothing unless OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md).
    args: [
      "--disable-warning=TimeoutNegativeWarning",
      "--import",
      TRACING_PRELOAD,
      ...(opts.nodeArgs ?? []),
      join(ROOT, "services", opts.service, "src", "main.ts"),
    ],
    env: { ...process.env, ...opts.env },
    cwd: ROOT,
    output: opts.output,
    netns: opts.netns,
  });
  opts.onSpawn?.(child);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (!child.running) {
      const code = await child.exited;
      // Let the output streams drain so the message carries the child's last words.
      await new Promise((r) => setTimeout(r, 50));
      throw new Error(`${opts.name} exited with code ${code} during start; its last output:\n${child.lastOutput()}`);
    }
    try {
      if ((await httpGet(opts.healthUrl, 1000)).status === 200) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  await child.stop();
  throw new Error(`${opts.name} did not answer ${opts.healthUrl} within ${opts.timeoutMs ?? 60_000} ms`);
}
