import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv, sharedEnv } from "@evb/config";
import { parseSigningSecret } from "@evb/domain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withComposeSecrets } from "../../scripts/compose-secrets/env-file.ts";
import { ROOT } from "./compose-fixture.ts";

const values = (text: string) =>
  Object.fromEntries(
    text
      .trim()
      .split("\n")
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
const SecretsKey = z.object({ SECRETS_KEY: sharedEnv.SECRETS_KEY });

describe("npm run compose-secrets", () => {
  it("makes a whsec_ signing secret and a 32-byte SECRETS_KEY that the services accept, new each time", () => {
    const a = values(withComposeSecrets("").text);
    const b = values(withComposeSecrets("").text);
    expect(Object.keys(a)).toEqual(["WEBHOOK_SECRETS", "SECRETS_KEY"]);
    expect(a.WEBHOOK_SECRETS).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(parseSigningSecret(a.WEBHOOK_SECRETS as string)).toHaveLength(24);
    expect(Buffer.from(a.SECRETS_KEY as string, "hex")).toHaveLength(32);
    expect(parseEnv("test", SecretsKey, { SECRETS_KEY: a.SECRETS_KEY }).SECRETS_KEY).toBe(a.SECRETS_KEY);
    expect(b.WEBHOOK_SECRETS).not.toBe(a.WEBHOOK_SECRETS);
    expect(b.SECRETS_KEY).not.toBe(a.SECRETS_KEY);
  });

  it("never replaces a value already set, keeps the other lines and fills one set to nothing", () => {
    const full = "SECRETS_KEY=abc\nWEBHOOK_SECRETS=whsec_x\n";
    expect(withComposeSecrets(full)).toEqual({ text: full, added: [] });
    const partial = withComposeSecrets('POSTGRES_PASSWORD=s3cret\nexport SECRETS_KEY=kept\nWEBHOOK_SECRETS=""');
    expect(partial.added).toEqual(["WEBHOOK_SECRETS"]);
    const lines = partial.text.trim().split("\n");
    expect(lines.slice(0, 2)).toEqual(["POSTGRES_PASSWORD=s3cret", "export SECRETS_KEY=kept"]);
    expect(lines.filter((l) => l.startsWith("WEBHOOK_SECRETS="))).toHaveLength(1);
    expect(lines[2]).toMatch(/^WEBHOOK_SECRETS=whsec_/);
  });

  it("writes .env in the folder it runs in, readable by its owner only, and leaves it alone the second time", () => {
    const dir = mkdtempSync(join(tmpdir(), "evb-compose-secrets-"));
    const run = () => spawnSync(process.execPath, [join(ROOT, "scripts", "compose-secrets.ts")], { cwd: dir, encoding: "utf8" });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    const written = readFileSync(join(dir, ".env"), "utf8");
    expect(Object.keys(values(written))).toEqual(["WEBHOOK_SECRETS", "SECRETS_KEY"]);
    expect(statSync(join(dir, ".env")).mode & 0o777).toBe(0o600);
    expect(run().stdout).toContain("left as it is");
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe(written);
    writeFileSync(join(dir, ".env"), "LOG_LEVEL=debug\n");
    expect(run().stdout).toContain("added WEBHOOK_SECRETS and SECRETS_KEY");
  });

  it("is kept out of git and of the image build", () => {
    expect(readFileSync(join(ROOT, ".gitignore"), "utf8").split("\n")).toContain(".env");
    expect(readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n")).toContain(".env");
  });
});
