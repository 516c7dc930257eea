import { describe, expect, it } from "vitest";
import { loadGatewayConfig } from "../../services/gateway/src/config.ts";
import { readCompose } from "./compose-fixture.ts";
import { composeEnv } from "./compose-model.ts";

const compose = readCompose();
const gateways = Object.entries(compose.services).filter(([, s]) => [s.command ?? []].flat().join(" ").includes("services/gateway/"));

// The gateway refuses to start on a non-loopback HOST with no access control (docs/security.md);
// the compose deployment listens on 0.0.0.0, so it must configure some.
describe("docker-compose.yml gateways", () => {
  it("are not open to everyone: their configuration passes the open-access guard", () => {
    expect(gateways.length).toBeGreaterThan(0);
    for (const [name, svc] of gateways) {
      const env = composeEnv(svc) as Record<string, string>;
      expect(() => loadGatewayConfig(env), name).not.toThrow();
      expect(loadGatewayConfig(env).API_KEYS, name).toBe(true);
    }
  });

  it("would be refused without API_KEYS", () => {
    const [name, svc] = gateways[0] as (typeof gateways)[number];
    const { API_KEYS: _keys, ...env } = composeEnv(svc) as Record<string, string>;
    expect(() => loadGatewayConfig(env), name).toThrow(/HOST=0\.0\.0\.0 is not loopback/);
  });
});
