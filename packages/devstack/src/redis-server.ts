import { mkdirSync } from "node:fs";
import { createConnection } from "node:net";
import { Child } from "./child.ts";
import type { Progress } from "./progress.ts";
import { requireRedisServer } from "./prerequisites.ts";

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

/** A private `redis-server` child, used only when nothing answers at REDIS_URL. */
export class RedisServer {
  private child?: Child;

  private readonly dir: string;
  private readonly port: number;
  private readonly progress: Progress;

  constructor(dir: string, port: number, progress: Progress) {
    this.dir = dir;
    this.port = port;
    this.progress = progress;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<string> {
    requireRedisServer();
    mkdirSync(this.dir, { recursive: true });
    this.progress(`redis: starting a private server on 127.0.0.1:${this.port}…`);
    this.child = new Child({
      name: "redis",
      command: "redis-server",
      args: ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--appendonly", "yes", "--save", ""],
      output: { file: `${this.dir}/redis.log` },
    });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (await redisAnswers(this.url)) return this.url;
      if (!this.child.running) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`redis-server did not answer on port ${this.port}; see ${this.dir}/redis.log`);
  }

  async stop(): Promise<void> {
    await this.child?.stop();
  }
}
