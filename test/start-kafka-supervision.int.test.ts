import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { call } from "./support/http.ts";
import { processesOf, StartRun } from "./support/start-run.ts";

// `npm start` with its own single Kafka broker, reusing the test Postgres and Redis. Faults
// survived: SIGKILL of the Kafka broker while the stack runs (restarted as the same node, with
// its data, and publishing works again), and Ctrl-C or SIGTERM at the awkward moments of the
// start — while Kafka is still starting, twice in a row, while the services start — after
// which nothing it started may be left running. Ctrl-C used to leave a starting broker behind.
describe("npm start supervises its Kafka broker and stops cleanly at any moment", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-start-kafka-"));
  const id = randomBytes(3).toString("hex");
  // Below Linux's ephemeral range, clear of the other tests' ranges (start-script 21000–25099,
  // kafka-failover 26000–26902, ledger-new-log 27000–27900): gateway, indexer (+100), notifier
  // (+200), MQTT (+300, not the default 1884, which another npm start test may hold), Kafka
  // (+1000, controller +1100) all within 28000–29999.
  const port = 28000 + Math.floor(Math.random() * 800);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    STACK_DIR: dir,
    PORT: String(port),
    KAFKA_PORT: String(port + 1000),
    MQTT_PORT: String(port + 300),
    START_KAFKA_BROKERS: "1",
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    DATABASE_SCHEMA: `startk_${id}`,
    KAFKA_TOPIC_PREFIX: `startk${id}.`,
    REDIS_PREFIX: `startk${id}`,
    KAFKA_CONSUMER_GROUP: `startk${id}`,
  };
  delete env.KAFKA_BROKERS;
  let run: StartRun | undefined;

  /** Whatever a failed test left running (npm start, a broker, a service) dies here, not with the machine. */
  const killLeftovers = () => {
    run?.kill();
    for (const p of processesOf(dir)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  afterEach(killLeftovers);
  afterAll(() => {
    killLeftovers();
    rmSync(dir, { recursive: true, force: true });
  });

  // The first run also fetches the Kafka jars into this test's STACK_DIR (later runs reuse them).
  it("Ctrl-C while the Kafka broker is still starting stops it, and npm start exits", async () => {
    run = new StartRun(env);
    await run.line(/\[stack\] kafka: starting 1 broker/, 150_000);
    run.ctrlC();
    expect(await run.exited, run.tail()).toBe(0);
    expect(run.output).toContain("[stack] stopped");
    expect(run.output).not.toContain("ready:");
    expect(run.output).not.toContain("npm start failed");
    // npm start exits only once what it started is gone: no polling here.
    expect(processesOf(dir)).toEqual([]);
  });

  it("a second Ctrl-C exits at once, and still kills the broker that was starting", async () => {
    run = new StartRun(env);
    await run.line(/\[stack\] kafka: starting 1 broker/, 60_000);
    // The broker's JVM running (not the storage format before it, which ends in an instant): its
    // orderly stop takes seconds, so the second Ctrl-C lands while the first stop still waits.
    await expect.poll(() => processesOf(dir).some((p) => p.command.includes("kafka.Kafka")), { timeout: 60_000, interval: 50 }).toBe(true);
    run.ctrlC();
    await run.line(/\[stack\] stopping…/, 30_000);
    run.ctrlC();
    expect(await run.exited, run.tail()).toBe(130);
    expect(run.output).toContain("[stack] stopped at once: killed every process it started");
    // SIGKILL is sent before the exit; the kernel may take a moment to end the JVM (a hang bound, not a timing claim).
    await expect.poll(() => processesOf(dir), { timeout: 10_000 }).toEqual([]);
  });

  it("SIGTERM while the services start stops them and the broker, and npm start exits", async () => {
    run = new StartRun(env);
    // A service's first output line: it is running, not yet healthy, and Kafka is up.
    await run.line(/^\[(indexer|notifier)-1\] /, 150_000);
    run.proc.kill("SIGTERM");
    expect(await run.exited, run.tail()).toBe(0);
    expect(run.output).toContain("[stack] stopped");
    expect(run.output).not.toContain("ready:");
    expect(run.output).not.toContain("npm start failed");
    expect(processesOf(dir)).toEqual([]);
  });

  it("restarts a SIGKILLed broker as the same node of the same cluster, and publishing works again", async () => {
    run = new StartRun(env);
    await run.line(/\[stack\] ready: /, 150_000);
    const gateway = `http://127.0.0.1:${port}/event-broker`;
    const opened = await call(gateway, `/rest/open?topic=kafka-restart`, {}, "POST");
    expect(opened.json, opened.text).toMatchObject({ data: true });
    expect((await call(gateway, "/rest/publish", { topic: "kafka-restart", content: "before" }, "POST")).json).toMatchObject({
      status: "SUCCESS",
    });

    const brokers = processesOf(dir).filter((p) => p.command.includes("kafka.Kafka"));
    expect(brokers).toHaveLength(1);
    const broker = brokers[0] as { pid: number; command: string };
    const clusterId = readFileSync(join(dir, "kafka", "node", "data", "meta.properties"), "utf8");
    process.kill(broker.pid, "SIGKILL");
    await run.line(/\[stack\] kafka-1 was killed by SIGKILL; restarting in 1 s$/, 30_000);
    await run.line(/\[stack\] kafka-1 is running again \(restart 1\)$/, 150_000);

    const restarted = processesOf(dir).filter((p) => p.command.includes("kafka.Kafka"));
    expect(restarted.map((p) => p.pid)).not.toContain(broker.pid);
    // The same configuration (node id, ports, log dirs) and the same data: the cluster it formed is the one it rejoined.
    expect(restarted.map((p) => p.command)).toEqual([broker.command]);
    expect(readFileSync(join(dir, "kafka", "node", "data", "meta.properties"), "utf8")).toBe(clusterId);
    // The log topic was made once, at start, and topics are not created on use: a broker that
    // came back without its data could not take this publish.
    await expect
      .poll(async () => (await call(gateway, "/rest/publish", { topic: "kafka-restart", content: "after" }, "POST")).json, {
        timeout: 90_000,
        interval: 1_000,
      })
      .toMatchObject({ status: "SUCCESS" });

    run.ctrlC();
    expect(await run.exited, run.tail()).toBe(0);
    expect(processesOf(dir)).toEqual([]);
  });
});
