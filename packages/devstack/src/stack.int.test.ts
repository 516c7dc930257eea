import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { portHolder } from "./port-holder.ts";
import { postgresAnswers } from "./postgres-server.ts";
import { redisAnswers } from "./redis-server.ts";
import { freePort } from "./service-process.ts";
import { LocalStack, startStack } from "./stack.ts";

/** Live processes whose command line contains `text` (a data folder, `:port`): what a stack may have left behind. */
function processesNaming(text: string): Array<{ pid: number; command: string }> {
  const out: Array<{ pid: number; command: string }> = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z") continue;
      const command = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").join(" ");
      if (command.includes(text)) out.push({ pid: Number(d), command });
    } catch {
      // exited while we looked
    }
  }
  return out;
}

/** One Redis command over a raw socket (the devstack has no Redis client), e.g. `["SET", "k", "v"]`; the first reply line. */
function redisCommand(url: string, args: string[]): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = createConnection({ host: u.hostname, port: Number(u.port) });
    sock.setTimeout(5_000, () => sock.destroy(new Error(`no reply from ${url}`)));
    sock.once("error", reject);
    sock.once("connect", () => sock.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`));
    let reply = "";
    sock.on("data", (d) => {
      reply += d.toString();
      const lines = reply.split("\r\n");
      // A bulk reply ($n) is complete with its value line; anything else with its first line.
      if (lines.length > (reply.startsWith("$") && !reply.startsWith("$-1") ? 2 : 1)) {
        sock.destroy();
        resolve(reply.startsWith("$") && !reply.startsWith("$-1") ? (lines[1] as string) : (lines[0] as string));
      }
    });
  });
}

// When nothing answers at DATABASE_URL / REDIS_URL, the stack starts private servers from the
// installed binaries, and stop() takes them down again. Faults survived: SIGKILL of the private
// Postgres and Redis of a supervised stack (npm start's), and a stop() (npm start's Ctrl-C)
// in the middle of their start.
describe("startStack without reachable Postgres and Redis", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-stack-"));
  // Run as root, the private Postgres runs as `postgres`, which must reach its folder below this one.
  chmodSync(dir, 0o755);
  const ports: number[] = [];
  afterAll(() => {
    for (const p of [...processesNaming(dir), ...ports.flatMap((port) => processesNaming(`:${port}`))]) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  /** Free ports for a private Postgres and Redis, so that a concurrent stack (npm start's defaults) is never hit. */
  const privatePorts = async () => {
    const p = { postgres: await freePort(), redis: await freePort() };
    ports.push(p.postgres, p.redis);
    return p;
  };

  it("starts a private Postgres and Redis, and stops exactly those", async () => {
    const lines: string[] = [];
    const stack = await startStack({
      dir: join(dir, "plain"),
      kafkaBrokers: inject("kafkaBrokers"),
      databaseUrl: "postgres://postgres@127.0.0.1:1/none",
      redisUrl: "redis://127.0.0.1:1",
      privatePorts: await privatePorts(),
      progress: (m) => lines.push(m),
    });
    try {
      expect(stack.databaseUrl).not.toContain(":1/");
      expect(stack.redisUrl).not.toBe("redis://127.0.0.1:1");
      const client = new pg.Client({ connectionString: stack.databaseUrl });
      await client.connect();
      expect((await client.query("select 41 + 1 as n")).rows[0].n).toBe(42);
      await client.end();
      expect(await redisAnswers(stack.redisUrl)).toBe(true);
      expect(lines.join("\n")).toMatch(/postgres: starting a private server/);
    } finally {
      await stack.stop();
    }
    expect(await postgresAnswers(stack.databaseUrl)).toBe(false);
    expect(await redisAnswers(stack.redisUrl)).toBe(false);
    // The shared servers were never touched.
    expect(await postgresAnswers(inject("databaseUrl"))).toBe(true);
  });

  it("supervised, restarts a SIGKILLed private Postgres and Redis on the same data, and says so", async () => {
    const lines: string[] = [];
    const said = (text: string) => expect.poll(() => lines, { timeout: 60_000 }).toContain(text);
    const p = await privatePorts();
    const stack = await startStack({
      dir: join(dir, "supervised"),
      kafkaBrokers: inject("kafkaBrokers"),
      databaseUrl: "postgres://postgres@127.0.0.1:1/none",
      redisUrl: "redis://127.0.0.1:1",
      privatePorts: p,
      supervise: true,
      progress: (m) => lines.push(m),
    });
    try {
      const client = new pg.Client({ connectionString: stack.databaseUrl });
      await client.connect();
      await client.query("create table kept (v text); insert into kept values ('before the kill')");
      await client.end();
      expect(await redisCommand(stack.redisUrl, ["SET", "kept", "before the kill"])).toBe("+OK");

      for (const [name, port] of [
        ["postgres", p.postgres],
        ["redis", p.redis],
      ] as const) {
        const holder = portHolder(port);
        expect(holder, `${name} on ${port}`).toBeDefined();
        process.kill((holder as { pid: number }).pid, "SIGKILL");
        await said(`${name} was killed by SIGKILL; restarting in 1 s`);
        await said(`${name} is running again (restart 1)`);
      }

      const again = new pg.Client({ connectionString: stack.databaseUrl });
      await again.connect();
      expect((await again.query("select v from kept")).rows).toEqual([{ v: "before the kill" }]);
      await again.end();
      expect(await redisCommand(stack.redisUrl, ["GET", "kept"])).toBe("before the kill");
    } finally {
      await stack.stop();
    }
    expect(await postgresAnswers(stack.databaseUrl)).toBe(false);
    expect(await redisAnswers(stack.redisUrl)).toBe(false);
    // Nothing restarted during or after the stop.
    expect(lines.filter((l) => /restarting in/.test(l))).toHaveLength(2);
  });

  it.each([
    ["Postgres", "postgres: starting a private server", "postgres://postgres@127.0.0.1:1/none", "redis://127.0.0.1:1"],
    ["Redis", "redis: starting a private server", "", "redis://127.0.0.1:1"],
  ])("a stop while the private %s starts ends it, and the start rejects", async (what, line, databaseUrl, redisUrl) => {
    const p = await privatePorts();
    const stackDir = join(dir, `stopped-${what}`);
    let stopped: Promise<void> | undefined;
    const stack: LocalStack = new LocalStack({
      dir: stackDir,
      kafkaBrokers: inject("kafkaBrokers"),
      databaseUrl: databaseUrl || inject("databaseUrl"),
      redisUrl,
      privatePorts: p,
      supervise: true,
      progress: (m) => {
        // On the next turn, when the server process has been spawned but does not answer yet.
        if (m.startsWith(line)) setImmediate(() => (stopped = stack.stop()));
      },
    });
    // Cut short by the stop: the server process was there and did not get to answer.
    await expect(stack.start()).rejects.toThrow(/during start/);
    expect(stopped).toBeDefined();
    await stopped;
    expect([...processesNaming(stackDir), ...processesNaming(`:${p.postgres}`), ...processesNaming(`:${p.redis}`)]).toEqual([]);
  });
});
