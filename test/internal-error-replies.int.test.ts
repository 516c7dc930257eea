import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { CONTEXT, expectBrokerError, genericCodeOf } from "./support/broker-expect.ts";
import { call } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";
import { TcpRelay } from "./support/tcp-relay.ts";

const LOG_DIR = join(import.meta.dirname, "..", ".cache", "test-logs");
const REFERENCE = / \(error reference ([0-9a-f]{12}); the gateway log has the detail\)$/;

// Crash survived: the gateway's Postgres goes away (connections cut, new ones refused). An
// operation that fails unexpectedly answered `service unavailable: <pg message>` (probe report,
// defect 10): the caller now gets a generic message with an error reference, and the detail is
// in the gateway's log under that reference.
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
      const r = await call(sys.gatewayUrl, `${CONTEXT[v]}/admin/listSubscription`, { [param]: "127.0.0.1:1" });
      expectBrokerError(r, v, genericCodeOf(v));
      const message = (r.json as { message: string }).message;
      expect(message.startsWith("service unavailable (error reference "), message).toBe(true);
      expect(message).not.toMatch(/ECONN|terminated|connect|127\.0\.0\.1|postgres|timeout/i);
      refs.push(REFERENCE.exec(message)?.[1] as string);
    }
    const log = readFileSync(join(LOG_DIR, `${sys.env.REDIS_PREFIX}-gateway-1.log`), "utf8");
    for (const ref of refs) {
      const line = log.split("\n").find((l) => l.includes(ref)) ?? "";
      expect(line, `log line for ${ref}`).toMatch(/operation failed unexpectedly/);
    }
  });
});
