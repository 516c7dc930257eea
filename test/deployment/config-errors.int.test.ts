import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "@evb/config";
import { describeVariables, SERVICE_SCHEMAS, type ServiceKind } from "./service-schemas.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const fixOf = (kind: ServiceKind, name: string) => describeVariables(SERVICE_SCHEMAS[kind]).find((v) => v.name === name)?.fix ?? "";

function configError(kind: ServiceKind, env: Record<string, string>): string {
  try {
    parseEnv(kind, SERVICE_SCHEMAS[kind], env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`${kind} accepted ${JSON.stringify(env)}`);
}

describe("a bad configuration value", () => {
  it("names the variable, its value and the fix, for every bad variable at once", () => {
    const msg = configError("gateway", { PORT: "abc", GROUP_IDS: "2" });
    expect(msg).toContain(`PORT ("abc")`);
    expect(msg).toContain(`Fix: ${fixOf("gateway", "PORT")}`);
    expect(msg).toContain(`GROUP_IDS ("2"): must include group "1"`);
    expect(msg).toContain(`Fix: ${fixOf("gateway", "GROUP_IDS")}`);
  });

  it("is refused for every numeric and enumerated variable of every service", () => {
    // Covers variables added later too: each gets a clearly bad value and must be named with its fix.
    for (const [kind, schema] of Object.entries(SERVICE_SCHEMAS) as Array<[ServiceKind, (typeof SERVICE_SCHEMAS)[ServiceKind]]>) {
      for (const v of describeVariables(schema)) {
        const bad = v.accepted.startsWith("integer") ? "1.5x" : v.accepted.startsWith("`") ? "no-such-value" : undefined;
        if (bad === undefined) continue;
        const msg = configError(kind, { [v.name]: bad });
        expect(msg, `${kind} ${v.name}`).toContain(`${v.name} ("${bad}")`);
        expect(msg, `${kind} ${v.name}`).toContain(`Fix: ${v.fix}`);
      }
    }
  });

  it("treats an empty value as unset, so the default applies", () => {
    const cfg = parseEnv("gateway", SERVICE_SCHEMAS.gateway, { PORT: "" }) as { PORT: number };
    expect(cfg.PORT).toBe(Number(describeVariables(SERVICE_SCHEMAS.gateway).find((v) => v.name === "PORT")?.default));
  });

  it.each([
    ["gateway", "PORT", "abc"],
    ["indexer", "SEALER_INDEX", "-1"],
    ["notifier", "HEALTH_PORT", "70000"],
  ] as Array<[ServiceKind, string, string]>)(
    "stops the %s before it connects anywhere (%s=%s)",
    (kind, name, value) => {
      // Unreachable dependencies make sure the exit comes from the configuration, not a connection.
      const res = spawnSync(process.execPath, ["--disable-warning=TimeoutNegativeWarning", `services/${kind}/src/main.ts`], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          [name]: value,
          KAFKA_BROKERS: "127.0.0.1:1",
          DATABASE_URL: "postgres://x@127.0.0.1:1/x",
          REDIS_URL: "redis://127.0.0.1:1",
        },
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(res.status, res.stderr).toBe(1);
      expect(res.stderr).toContain(`${kind}: failed to start: ${kind}: invalid configuration`);
      expect(res.stderr).toContain(`${name} ("${value}")`);
      expect(res.stderr).toContain(`Fix: ${fixOf(kind, name)}`);
      // A whole Node start on a loaded machine: the child's own 30 s bound is the limit, not vitest's 5 s.
    },
    35_000,
  );
});
