import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Child, freePort, startServiceProcess } from "@evb/devstack";
import { silentLogger } from "@evb/domain";
import { loadNotifierConfig } from "../../services/notifier/src/config.ts";
import { type RunningNotifier, startNotifier } from "../../services/notifier/src/main.ts";
import { TestSystem } from "../support/system.ts";
import { injectRunLoopFault } from "./run-loop-fault.ts";

// Crash survived: the delivery worker's run loop dying inside a live notifier process. The
// process must say so (/health 503) and exit non-zero instead of idling as a zombie.
describe("a BullMQ worker whose run loop dies leaves a zombie notifier", () => {
  let sys: TestSystem;

  beforeAll(async () => {
    // Only the ledger schema is needed (the indexer migrates it); no gateway traffic.
    sys = await TestSystem.start({ gateways: 0, notifiers: 0 });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("reports the dead loop on /health (503, naming what failed)", async () => {
    let reported: Error | undefined;
    const fault = injectRunLoopFault();
    const notifier: RunningNotifier = await startNotifier(
      loadNotifierConfig({ ...sys.env, HOST: "127.0.0.1", HEALTH_PORT: "0" }),
      silentLogger,
      { onFatal: (err) => (reported = err) },
    );
    try {
      expect((await fetch(notifier.healthUrl)).status).toBe(200);
      fault.kill();
      await expect.poll(() => reported?.message, { timeout: 10_000 }).toMatch(/run loop died/);
      const res = await fetch(notifier.healthUrl);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ ok: false, failed: expect.stringMatching(/^delivery worker: /) });
    } finally {
      fault.restore();
      await notifier.close();
    }
  });

  it("exits non-zero so that a supervisor restarts it", async () => {
    const port = await freePort();
    const healthUrl = `http://127.0.0.1:${port}/health`;
    const log = join(import.meta.dirname, "..", "..", ".cache", "test-logs", `${sys.env.REDIS_PREFIX}-notifier-fatal.log`);
    const child: Child = await startServiceProcess({
      name: "notifier-fatal",
      service: "notifier",
      env: {
        ...sys.env,
        HOST: "127.0.0.1",
        HEALTH_PORT: String(port),
        NODE_OPTIONS: `--import ${join(import.meta.dirname, "run-loop-fault.ts")}`,
        EVB_FAULT_KILL_RUN_LOOP_ON: "SIGUSR2",
      },
      healthUrl,
      output: { file: log },
    });
    try {
      // Started and healthy (startServiceProcess waited for a 200); now the run loop dies.
      child.signal("SIGUSR2");
      const code = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r("still running"), 20_000))]);
      expect(code).toBe(1);
      // The operator learns what failed and what to do about it.
      expect(readFileSync(log, "utf8")).toMatch(/delivery worker stopped.*supervisor restarts it/);
    } finally {
      await child.stop(2000);
    }
  });
});
