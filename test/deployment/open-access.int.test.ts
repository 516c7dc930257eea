import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

/** Runs the gateway's entry point with unreachable dependencies: a refusal must come from the configuration. */
function startGateway(env: Record<string, string>) {
  return spawnSync(process.execPath, ["--disable-warning=TimeoutNegativeWarning", "services/gateway/src/main.ts"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      KAFKA_BROKERS: "127.0.0.1:1",
      DATABASE_URL: "postgres://x@127.0.0.1:1/x",
      DATABASE_QUERY_TIMEOUT_MS: "500",
      REDIS_URL: "redis://127.0.0.1:1",
      PORT: "0",
      ...env,
    },
    encoding: "utf8",
    timeout: 30_000,
  });
}

// Crash survived: none. A gateway reachable from the network that checks nobody refuses to start.
describe("a gateway on a non-loopback HOST without access control", () => {
  it("stops at start with the reason and the fix", () => {
    const res = startGateway({ HOST: "0.0.0.0" });
    expect(res.status, res.stderr).toBe(1);
    expect(res.stderr).toContain("gateway: failed to start: gateway: invalid configuration");
    expect(res.stderr).toContain("HOST=0.0.0.0 is not loopback and no access control is configured");
    expect(res.stderr).toContain("ALLOW_OPEN_ACCESS=true");
  }, 60_000);

  it("gets past the check with ALLOW_OPEN_ACCESS=true (and then stops at the unreachable database instead)", () => {
    const res = startGateway({ HOST: "0.0.0.0", ALLOW_OPEN_ACCESS: "true" });
    expect(res.status, res.stderr).toBe(1);
    expect(res.stderr).not.toContain("invalid configuration");
    expect(res.stderr).toContain("could not be prepared");
  }, 60_000);
});
