import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

// A dependency that does not answer at start stops the service with a message that names it,
// its address (password hidden) and what to check. No server is needed: the address is closed.
describe("start-up failure messages", () => {
  it.each(["gateway", "indexer", "notifier"])(
    "%s: unreachable Postgres names DATABASE_URL, without the password",
    (service) => {
      const r = spawnSync(process.execPath, [join(ROOT, "services", service, "src", "main.ts")], {
        env: { ...process.env, DATABASE_URL: "postgres://evb:s3cret@127.0.0.1:1/evb", HEALTH_PORT: "0", PORT: "0" },
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${service}: failed to start: Postgres at postgres://evb:***@127.0.0.1:1/evb`);
      expect(r.stderr).toContain("Check DATABASE_URL");
      expect(r.stderr + r.stdout).not.toContain("s3cret");
      // A whole Node start on a loaded machine: the child's own 30 s bound is the limit, not vitest's 5 s.
    },
    35_000,
  );
});
