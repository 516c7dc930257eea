import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import type { Progress } from "./progress.ts";
import { findPostgresBin } from "./prerequisites.ts";

/** True when a PostgreSQL server answers at `url`. */
export async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A private PostgreSQL cluster under `dir`, made with `initdb` and run with `pg_ctl` when no
 * server answers at the configured address. Trust auth on 127.0.0.1 only.
 */
export class PostgresServer {
  private started = false;
  private readonly bin: string;

  private readonly dir: string;
  private readonly port: number;
  private readonly progress: Progress;

  constructor(dir: string, port: number, progress: Progress) {
    this.dir = dir;
    this.port = port;
    this.progress = progress;
    this.bin = findPostgresBin();
  }

  private tool(name: string): string {
    return this.bin ? join(this.bin, name) : name;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<string> {
    const data = join(this.dir, "data");
    // initdb and postgres refuse to run as root; run them as the `postgres` user when we are root.
    const asUser = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
    if (!existsSync(join(data, "PG_VERSION"))) {
      this.progress(`postgres: creating a private cluster in ${data}…`);
      mkdirSync(this.dir, { recursive: true });
      if (asUser.length) {
        // The postgres user must reach its data folder: open our stack folder for traversal.
        chmodSync(dirname(this.dir), 0o755);
        spawnSync("chown", ["-R", "postgres", this.dir]);
      }
      this.run(asUser, "initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
    }
    this.progress(`postgres: starting a private server on 127.0.0.1:${this.port}…`);
    this.run(asUser, "pg_ctl", [
      "-D",
      data,
      "-l",
      join(this.dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`,
      "start",
    ]);
    this.started = true;
    return this.url;
  }

  private run(prefix: string[], name: string, args: string[]): void {
    const [cmd, ...rest] = [...prefix, this.tool(name), ...args];
    const res = spawnSync(cmd as string, rest, { encoding: "utf8" });
    if (res.status !== 0) throw new Error(`${name} failed (exit ${res.status}): ${res.stderr || res.stdout}`);
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    const asUser = process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--"] : [];
    this.run(asUser, "pg_ctl", ["-D", join(this.dir, "data"), "-m", "fast", "-w", "stop"]);
  }
}
