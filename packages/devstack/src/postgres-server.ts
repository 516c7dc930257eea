import { spawnSync } from "node:child_process";
import { appendFileSync, chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import pg from "pg";
import { Child, lastLinesOf } from "./child.ts";
import { LOOPBACK, type Placement } from "./placement.ts";
import type { Progress } from "./progress.ts";
import { findPostgresBin } from "./prerequisites.ts";
import { howItEnded, Supervised } from "./supervised.ts";

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

/** initdb and postgres refuse to run as root; as root they run as the `postgres` user. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  const user = { uid: id("-u"), gid: id("-g") };
  if (!Number.isInteger(user.uid) || user.uid <= 0) {
    throw new Error(
      "running as root, and there is no `postgres` user to run the private PostgreSQL as; create one (`useradd postgres`) or set DATABASE_URL to a running server.",
    );
  }
  return user;
}

/**
 * A private PostgreSQL cluster under `dir`, made with `initdb` when no server answers at the
 * configured address, and run as a child process (not daemonised by pg_ctl) so that its death is
 * seen at once and, when supervised, followed by a restart on the same data. Trust auth on
 * 127.0.0.1 only; placed on another address (a host of the multi-host test bed), also for the
 * networks that host is directly on (`samenet`). `stop()` may come at any moment, also in the middle of `start()`.
 */
export class PostgresServer {
  private readonly bin: string;
  private readonly dir: string;
  private readonly port: number;
  private readonly progress: Progress;
  private readonly node: Supervised<Child>;
  private readonly place: Placement;
  private readonly serverArgs: readonly string[];

  /** `serverArgs`: more `postgres` arguments (e.g. `-c ssl=on …` for the TLS tests); files they name in `dir` are the server user's. */
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
    this.bin = findPostgresBin();
    this.node = new Supervised<Child>({ name: "postgres", progress, restart: supervise, launch: (onSpawn) => this.launch(onSpawn) });
  }

  private tool(name: string): string {
    return this.bin ? join(this.bin, name) : name;
  }

  get url(): string {
    return `postgres://postgres@${this.place.host}:${this.port}/postgres`;
  }

  private get data(): string {
    return join(this.dir, "data");
  }

  async start(): Promise<string> {
    const user = postgresUser();
    if (!existsSync(join(this.data, "PG_VERSION"))) {
      this.progress(`postgres: creating a private cluster in ${this.data}…`);
      mkdirSync(this.dir, { recursive: true });
      if (user) {
        // The postgres user must reach its data folder: open our stack folder for traversal.
        chmodSync(dirname(this.dir), 0o755);
        spawnSync("chown", ["-R", "postgres", this.dir]);
      }
      const res = spawnSync(this.tool("initdb"), ["-D", this.data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], {
        encoding: "utf8",
        ...user,
      });
      if (res.status !== 0) throw new Error(`initdb failed (exit ${res.status}): ${res.stderr || res.stdout}`);
      if (this.place.host !== LOOPBACK.host) appendFileSync(join(this.data, "pg_hba.conf"), "host all all samenet trust\n");
    }
    this.progress(`postgres: starting a private server on ${this.place.host}:${this.port}…`);
    await this.node.start();
    return this.url;
  }

  private async launch(onSpawn: (c: Child) => void): Promise<Child> {
    const log = join(this.dir, "server.log");
    const child = new Child({
      name: "postgres",
      command: this.tool("postgres"),
      args: ["-D", this.data, "-p", String(this.port), "-k", this.dir, "-c", `listen_addresses=${this.place.host}`, ...this.serverArgs],
      cwd: this.dir,
      output: { file: log },
      // SIGTERM would wait for every client to leave; SIGINT is the fast shutdown pg_ctl used.
      stopSignal: "SIGINT",
      netns: this.place.netns,
      ...postgresUser(),
    });
    onSpawn(child);
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      // Asked before the liveness check: an answer from another server while ours died is no start.
      const answers = await postgresAnswers(this.url);
      if (!child.running) {
        const code = await child.exited;
        throw new Error(`postgres ${howItEnded(child, code)} during start; ` + `the end of ${log}:\n${lastLinesOf(log, 10)}`);
      }
      if (answers) return child;
      await new Promise((r) => setTimeout(r, 200));
    }
    await child.stop();
    throw new Error(`postgres did not answer on ${this.place.host}:${this.port} within 60 s; see ${log}`);
  }

  /** Stops the server (and any pending restart); idempotent. */
  async stop(): Promise<void> {
    await this.node.stop();
  }
}
