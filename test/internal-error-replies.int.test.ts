import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CONTEXT, expectBrokerError, genericCodeOf } from "./support/broker-expect.ts";
import { rawCall } from "./support/raw-http.ts";
import { TestSystem } from "./support/system.ts";
import { TcpRelay } from "./support/tcp-relay.ts";

const LOG_DIR = join(import.meta.dirname, "..", ".cache", "test-logs");

// Crash survived: the gateway's Postgres goes away (connections cut, new ones refused). An
// operation that fails unexpectedly answered `service unavailable: <pg message>` (probe report,
// defect 10): the caller now gets a generic message naming the request id, and the detail is
// in the gateway's log under that id.
describe("defect 10: replies never carry internal error text", () => {
  let sys: TestSystem;
  let relay: TcpRelay;

  beforeAll(async () => {
    relay = TcpRelay.for(inject("databaseUrl"), 5432);
    await relay.start();
    sys = await TestSystem.start({
      gatewayEnv: { DATABASE_URL: relay.via(inject("databaseUrl")), DATABASE_QUERY_TIMEOUT_MS: "1000" },
    });
  });
  afterAll(async () => {
    relay?.up();
    await sys?.stop();
    relay?.close();
  });

  it("a stopped Postgres answers listSubscription with the generic code and a reference, the detail logged", async () => {
    relay.down();
    const refs: string[] = [];
    for (const v of ["L", "M"] as const) {
      const param = v === "L" ? "nodeInstances" : "nodeIp";
      const id = `defect10-pg-${v}-${Date.now()}`;
      const r = await rawCall(sys.gatewayUrl, {
        path: `${CONTEXT[v]}/admin/listSubscription?${param}=127.0.0.1:1`,
        headers: { "x-request-id": id },
      });
      expectBrokerError(r, v, genericCodeOf(v), `service unavailable (request id ${id}; the gateway log has the detail)`);
      refs.push(id);
    }
    // The log reaches its file through the child's stdout: wait for the lines, do not sleep.
    const logged = (ref: string) =>
      readFileSync(join(LOG_DIR, `${sys.env.REDIS_PREFIX}-gateway-1.log`), "utf8")
        .split("\n")
        .find((l) => l.includes(ref) && l.includes("operation failed unexpectedly"));
    for (let i = 0; i < 100 && refs.some((ref) => !logged(ref)); i++) await new Promise((r) => setTimeout(r, 100));
    for (const ref of refs) expect(logged(ref), `log line for ${ref}`).toMatch(/"err":\{/);
  });
});
