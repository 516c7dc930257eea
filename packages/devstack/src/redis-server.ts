import { mkdirSync } from "node:fs";
import { createConnection } from "node:net";
import { Child, lastLinesOf } from "./child.ts";
import { LOOPBACK, type Placement } from "./placement.ts";
import type { Progress } from "./progress.ts";
import { requireRedisServer } from "./prerequisites.ts";
import { howItEnded, Supervised } from "./supervised.ts";

/** True when a Redis server answers PING at `url`. */
export function redisAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const sock = createConnection({ host: u.hostname || "127.0.0.1", port: Number(u.port || 6379) });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(2000, () => done(false));
    sock.once("error", () => done(false));
    sock.once("connect", () => sock.write("PING\r\n"));
    sock.once("data", (d) => done(d.toString().startsWith("+PONG") || d.toString().startsWith("-NOAUTH")));
  });
}

/**
 * A private `redis-server` child, used only when nothing answers at REDIS_URL; when supervised,
 * restarted on the same folder (its append-only file keeps the queues) when it dies. `stop()`
 * may come at any moment, also in the middle of `start()`.
 */
export class RedisServer {
  private readonly dir: string;
  private readonly port: number;
  private readonly progress: Progress;
  private readonly node: Supervised<Child>;
  private readonly place: Placement;
  private readonly serverArgs: readonly string[];

  /** `serverArgs`: more `redis-server` arguments (e.g. `--tls-port …` for the TLS tests; the plain port stays for the readiness check). */
  constructor(
    dir: string,
    port: number,
    progress: Progress,
    supervise = false,
    place: Placement = LOOPBACK,
    serverArgs: readonly string[] = [],
  ) {
    this.dir = dir;
    this.serverArgs = serverArgs;
    this.place = place;
    this.port = port;
    this.progress = progress;
    this.node = new Supervised<Child>({ name: "redis", progress, restart: supervise, launch: (onSpawn) => this.launch(onSpawn) });
  }

  get url(): string {
    return `redis://${this.place.host}:${this.port}`;
  }

  async start(): Promise<string> {
    requireRedisServer();
    mkdirSync(this.dir, { recursive: true });
    this.progress(`redis: starting a private server on ${this.place.host}:${this.port}…`);
    await this.node.start();
    return this.url;
  }

  private async launch(onSpawn: (c: Child) => void): Promise<Child> {
    const log = `${this.dir}/redis.log`;
    const child = new Child({
      name: "redis",
      command: "redis-server",
      args: [
        "--port",
        String(this.port),
        "--bind",
        this.place.host,
        "--dir",
        this.dir,
        "--appendonly",
        "yes",
        "--save",
        "",
        "--protected-mode",
        this.place.host === LOOPBACK.host ? "yes" : "no",
        ...this.serverArgs,
      ],
      output: { file: log },
      netns: this.place.netns,
    });
    onSpawn(child);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      // Asked before the liveness check: an answer from another server while ours died is no start.
      const answers = await redisAnswers(this.url);
      if (!child.running) {
        const code = await child.exited;
        throw new Error(`redis-server ${howItEnded(child, code)} during start; the end of ${log}:\n${lastLinesOf(log, 10)}`);
      }
      if (answers) return child;
      await new Promise((r) => setTimeout(r, 200));
    }
    await child.stop();
    throw new Error(`redis-server did not answer on port ${this.port} within 20 s; see ${log}`);
  }

  /** Stops the server (and any pending restart); idempotent. */
  async stop(): Promise<void> {
    await this.node.stop();
  }
}
