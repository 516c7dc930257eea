import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpGet } from "@evb/devstack";
import { afterAll, describe, expect, inject, it } from "vitest";
import { processesOf, StartRun } from "./support/start-run.ts";

/** Ports on the Fetch standard's "bad ports" list (fetch refuses them outright). */
const FETCH_BLOCKED = [10080, 6665, 6666, 6667, 6668, 6669, 6000, 4190, 6697];

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A fetch-refused port for the gateway whose indexer (+100), notifier (+200) and MQTT ports are free too. */
async function blockedGatewayPort(): Promise<{ port: number; mqtt: number }> {
  for (const port of FETCH_BLOCKED) {
    const mqtt = port + 1_000;
    if ((await Promise.all([port, port + 100, port + 200, mqtt].map(free))).every(Boolean)) return { port, mqtt };
  }
  throw new Error("no port of the Fetch standard's bad-ports list is free here with its neighbours");
}

// Issue 20: `PORT=10080 npm start` never printed "ready": its health checks used fetch, which
// refuses the Fetch standard's bad ports although the gateway answered there. The stack's checks
// go over node:http now; this runs npm start on such a port (with the test Kafka, Postgres, Redis).
describe("npm start on a port fetch refuses", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-start-blocked-"));
  const id = randomBytes(3).toString("hex");
  let run: StartRun | undefined;

  afterAll(() => {
    run?.kill();
    for (const p of processesOf(dir)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("becomes ready, answers there, and Ctrl-C stops it", async () => {
    const { port, mqtt } = await blockedGatewayPort();
    run = new StartRun({
      ...process.env,
      STACK_DIR: dir,
      PORT: String(port),
      MQTT_PORT: String(mqtt),
      KAFKA_BROKERS: inject("kafkaBrokers"),
      DATABASE_URL: inject("databaseUrl"),
      REDIS_URL: inject("redisUrl"),
      DATABASE_SCHEMA: `startb_${id}`,
      KAFKA_TOPIC_PREFIX: `startb${id}.`,
      REDIS_PREFIX: `startb${id}`,
      KAFKA_CONSUMER_GROUP: `startb${id}`,
    });
    // Hang bound: three services started on a loaded machine.
    const ready = await run.line(/\[stack\] ready: /, 120_000);
    expect(ready).toContain(`gateway http://127.0.0.1:${port} `);
    await expect(fetch(`http://127.0.0.1:${port}/readyz`)).rejects.toThrow();
    expect((await httpGet(`http://127.0.0.1:${port}/event-broker/admin/getVersion`, 5_000)).status).toBe(200);
    run.ctrlC();
    expect(await run.exited, run.tail()).toBe(0);
    expect(processesOf(dir)).toEqual([]);
  }, 180_000);
});
