import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
/** A node program that prints the groups a service would serve, as it parses them. */
const PRINT_GROUPS = `node --input-type=module -e 'import { groupIdsFromEnv } from "@evb/config"; console.log(JSON.stringify(groupIdsFromEnv("probe")))'`;

function bash(line: string): { stdout: string; stderr: string } {
  const { GROUPS: _g, GROUP_IDS: _i, ...env } = process.env;
  const res = spawnSync("bash", ["-c", line], { cwd: ROOT, env, encoding: "utf8", timeout: 30_000 });
  expect(res.status, res.stderr).toBe(0);
  return { stdout: res.stdout.trim(), stderr: res.stderr };
}

describe("group ids set from a bash command line (regression: GROUPS=1,2 npm start kept group 1 only)", () => {
  it("GROUP_IDS=1,2 reaches the process", () => {
    expect(bash(`GROUP_IDS=1,2 ${PRINT_GROUPS}`).stdout).toBe('["1","2"]');
  });

  it("bash keeps GROUPS to itself, which is why the setting was renamed", () => {
    expect(bash(`GROUPS=1,2 ${PRINT_GROUPS}`).stdout).toBe('["1"]');
  });

  it("GROUPS exported from outside bash still reaches the process, with a warning", () => {
    const { stdout, stderr } = bash(`env GROUPS=1,2 ${PRINT_GROUPS}`);
    expect(stdout).toBe('["1","2"]');
    expect(stderr).toContain("probe: GROUPS is deprecated; set GROUP_IDS instead");
  });
});
