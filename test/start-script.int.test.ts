import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inject } from "vitest";
import { verifyWebhook } from "evb-client";
import { Receiver } from "./support/receiver.ts";
import { alive, descendants, processesOf, readCmdline } from "./support/start-run.ts";

const ROOT = join(import.meta.dirname, "..");

function waitForLine(proc: ChildProcess, re: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms; output:\n${seen}`)), timeoutMs);
    const onData = (d: Buffer) => {
      seen += d.toString();
      const line = seen.split("\n").find((l) => re.test(l));
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    };
    proc.stdout?.on("data", onData);
    proc.stderr?.on("data", onData);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ${re}; output:\n${seen}`));
    });
  });
}

// The `npm start` entry point as a user runs it: with its own Kafka (from the jars), reusing
// the test Postgres and Redis. Crash survived: SIGKILL of a service process (npm start restarts
// it); also proves start-up, the single-instance lock, that a second stack on taken ports fails
// naming the port and its holder, and that Ctrl-C (SIGINT) leaves no process of the stack running.
describe("npm start (scripts/start.ts)", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-start-"));
  const id = randomBytes(3).toString("hex");
  // Below Linux's ephemeral range (32768–60999), so that no outgoing connection of a concurrent
  // test holds a port the stack binds: gateway, indexer (+100), notifier (+200), MQTT (+300, not
  // the default 1884, which another npm start test may hold), Kafka (+1000, controller +1100)
  // all within 21000–25099.
  const port = 21000 + Math.floor(Math.random() * 3000);
  const env = {
    ...process.env,
    STACK_DIR: dir,
    KAFKA_PORT: String(port + 1000),
    MQTT_PORT: String(port + 300),
    PORT: String(port),
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    DATABASE_SCHEMA: `start_${id}`,
    KAFKA_TOPIC_PREFIX: `start${id}.`,
    REDIS_PREFIX: `start${id}`,
    KAFKA_CONSUMER_GROUP: `start${id}`,
  };
  delete (env as Record<string, string | undefined>).KAFKA_BROKERS;
  const script = [join(ROOT, "scripts", "start.ts")];
  let main: ChildProcess | undefined;

  afterAll(() => {
    if (main?.pid && alive(main.pid)) process.kill(main.pid, "SIGKILL");
    // A failed test must not leave the stack's broker or services running.
    for (const p of processesOf(dir)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  // Hang bound, not a goal: the sum of the waits below, on a machine that may be 3-4x slower than usual.
  it("reaches ready, refuses a second start, restarts a killed service, and Ctrl-C stops every process it started", async () => {
    main = spawn(process.execPath, script, { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    main.stdout?.on("data", (d) => {
      output += d.toString();
    });
    const ready = await waitForLine(main, /\[stack\] ready: /, 150_000);
    expect(ready).toContain(`http://127.0.0.1:${port}`);
    expect(ready).toContain(`Console: http://127.0.0.1:${port}/console/`);
    // The ready output lists each service's liveness, readiness and metrics endpoints.
    await expect.poll(() => output).toContain(`indexer-1   http://127.0.0.1:${port + 100}/livez  http://127.0.0.1:${port + 100}/readyz`);
    for (const [name, p] of [
      ["gateway-1", port],
      ["notifier-1", port + 200],
    ] as const) {
      expect(output).toContain(
        `${name.padEnd(10)}  http://127.0.0.1:${p}/livez  http://127.0.0.1:${p}/readyz  http://127.0.0.1:${p}/metrics`,
      );
      expect((await fetch(`http://127.0.0.1:${p}/readyz`)).status).toBe(200);
      expect(await (await fetch(`http://127.0.0.1:${p}/metrics`)).text()).toContain("evb_process_cpu_seconds_total");
    }

    const version = (await (await fetch(`http://127.0.0.1:${port}/event-broker/admin/getVersion`)).json()) as { code: number };
    expect(version.code).toBe(0);

    // Regression: the dev stack signed nothing (the README's `evb listen --secret` never
    // verified) and each service warned that SECRETS_KEY was not set. It now prints its
    // development secret, and its callbacks verify with it.
    const secret = /development secret (whsec_[A-Za-z0-9+/]+) /.exec(output)?.[1];
    expect(secret, "the ready output names the development secret").toBeDefined();
    expect(output).not.toContain("SECRETS_KEY is not set");
    const rx = await Receiver.start();
    try {
      const m = `http://127.0.0.1:${port}/event-m`;
      const form = (o: Record<string, string>) => ({ method: "POST", body: new URLSearchParams(o) });
      await fetch(`${m}/rest/open`, form({ topic: "signed" }));
      // Variant M answers a subscribe with the bare id.
      const subscriptionId = await (await fetch(`${m}/rest/subscribe`, form({ topic: "signed", url: rx.url() }))).text();
      await fetch(`${m}/rest/publish`, form({ topic: "signed", content: "hello" }));
      await expect.poll(() => rx.requests.length, { timeout: 30_000 }).toBeGreaterThan(0);
      const [hook] = rx.requests;
      expect(verifyWebhook({ secret: secret as string, headers: hook?.headers ?? {}, body: hook?.body ?? "" }).ok).toBe(true);
      await fetch(`${m}/rest/unSubscribe`, form({ subscriptionId }));
    } finally {
      await rx.close();
    }

    const second = spawn(process.execPath, script, { env, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let secondErr = "";
    second.stderr?.on("data", (d) => {
      secondErr += d.toString();
    });
    const secondCode = await new Promise((r) => second.once("exit", r));
    expect(secondCode).toBe(1);
    expect(secondErr).toMatch(/already running/);

    // Regression: another checkout's npm start (its own .cache) on the same ports printed
    // "ready:" for this stack and exited 0. It must fail before starting anything, naming the
    // port and the process that holds it.
    const otherDir = mkdtempSync(join(tmpdir(), "evb-start-other-"));
    try {
      const other = spawn(process.execPath, script, { env: { ...env, STACK_DIR: otherDir }, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let otherOut = "";
      other.stdout?.on("data", (d) => {
        otherOut += d.toString();
      });
      other.stderr?.on("data", (d) => {
        otherOut += d.toString();
      });
      const otherCode = await new Promise((r) => other.once("exit", r));
      expect(otherCode, otherOut).toBe(1);
      const gatewayPid = descendants(main.pid as number).find((pid) => readCmdline(pid).includes("services/gateway/src/main.ts"));
      expect(otherOut).toContain(`port ${port} (for gateway-1) is already in use by pid ${gatewayPid} (`);
      expect(otherOut).toContain(`port ${port + 1000} (for Kafka broker 1) is already in use by pid `);
      expect(otherOut).not.toContain("ready:");
      expect(otherOut).not.toContain("kafka: starting");
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }

    // A service that dies is restarted, and says so.
    const indexerPid = descendants(main.pid as number).find((pid) => readCmdline(pid).includes("services/indexer/src/main.ts"));
    expect(indexerPid).toBeDefined();
    process.kill(indexerPid as number, "SIGKILL");
    await expect.poll(() => output, { timeout: 30_000 }).toContain("[stack] indexer-1 was killed by SIGKILL; restarting in 1 s");
    await expect.poll(() => output, { timeout: 90_000 }).toContain("[stack] indexer-1 is running again (restart 1)");
    expect(alive(indexerPid as number)).toBe(false);
    await expect.poll(async () => (await fetch(`http://127.0.0.1:${port + 100}/readyz`)).status, { timeout: 60_000 }).toBe(200);

    const started = descendants(main.pid as number);
    // gateway, indexer, notifier and the Kafka JVM at least
    expect(started.length).toBeGreaterThanOrEqual(4);
    const before = output.length;
    main.kill("SIGINT");
    const code = await new Promise((r) => main?.once("exit", r));
    expect(code).toBe(0);
    expect(started.filter(alive)).toEqual([]);
    expect(existsSync(join(dir, "start.lock"))).toBe(false);
    // Nothing restarts during the shutdown.
    expect(output.slice(before)).not.toMatch(/restarting in/);
  }, 360_000);
});
