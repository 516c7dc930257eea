import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ""}` };

/**
 * Node refuses to strip types under node_modules, so the .ts sources the workspace runs would
 * fail for anyone installing the packages from npm. This packs @evb/client and @evb/cli the way
 * `npm publish` does (prepack builds dist/ and points the manifest at it) in a copy of the
 * workspace, installs the tarballs into node_modules and runs them there.
 */
describe("the publishable packages", () => {
  const tmp = mkdtempSync(join(tmpdir(), "evb-pack-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  function pack(name: "client" | "cli"): string {
    const dir = join(tmp, "packages", name);
    cpSync(join(ROOT, "packages", name), dir, { recursive: true, filter: (src) => !src.includes("node_modules") });
    const out = execFileSync("npm", ["pack", "--pack-destination", tmp, "--silent"], { cwd: dir, env, encoding: "utf8" });
    return join(tmp, out.trim().split("\n").pop() as string);
  }

  function install(tarball: string, name: string): void {
    const into = join(tmp, "app", "node_modules", "@evb", name);
    mkdirSync(into, { recursive: true });
    execFileSync("tar", ["xzf", tarball, "-C", into, "--strip-components=1"]);
  }

  it("run from node_modules as JavaScript, with the manifest restored afterwards", () => {
    mkdirSync(join(tmp, "scripts"), { recursive: true });
    cpSync(join(ROOT, "scripts", "pack-manifest.ts"), join(tmp, "scripts", "pack-manifest.ts"));
    cpSync(join(ROOT, "tsconfig.base.json"), join(tmp, "tsconfig.base.json"));
    symlinkSync(join(ROOT, "node_modules"), join(tmp, "node_modules"));
    install(pack("client"), "client");
    install(pack("cli"), "cli");
    writeFileSync(join(tmp, "app", "package.json"), '{"type":"module"}');
    writeFileSync(
      join(tmp, "app", "use.js"),
      'import { BrokerClientM, decodeContent, verifyWebhook } from "evb-client";\n' +
        'const c = new BrokerClientM({ baseUrl: "http://127.0.0.1:1/event-m" });\n' +
        'console.log(c.variant, verifyWebhook({ secret: "s", headers: {}, body: "" }).ok, decodeContent({ content: "aMOp" }));\n',
    );
    expect(execFileSync("node", ["use.js"], { cwd: join(tmp, "app"), env, encoding: "utf8" })).toBe("M false hé\n");
    const help = execFileSync("node", [join("node_modules", "@evb", "cli", "dist", "bin", "evb.js"), "--help"], {
      cwd: join(tmp, "app"),
      env,
      encoding: "utf8",
    });
    expect(help).toContain("evb — the event broker's command line");
    const version = execFileSync("node", [join("node_modules", "@evb", "cli", "dist", "bin", "evb.js"), "--version"], {
      cwd: join(tmp, "app"),
      env,
      encoding: "utf8",
    });
    expect(version).toBe(`evb ${JSON.parse(readFileSync(join(ROOT, "packages", "cli", "package.json"), "utf8")).version}\n`);
    for (const name of ["client", "cli"]) {
      // npm takes a LICENSE only from the package's own directory: each carries the root's.
      const installed = join(tmp, "app", "node_modules", "@evb", name);
      expect(readFileSync(join(installed, "LICENSE"), "utf8"), `${name} LICENSE`).toBe(readFileSync(join(ROOT, "LICENSE"), "utf8"));
      expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).license).toBe("Apache-2.0");
      const manifest = (root: string) => readFileSync(join(root, "packages", name, "package.json"), "utf8");
      expect(manifest(tmp), `${name}/package.json after postpack`).toBe(manifest(ROOT));
      expect(existsSync(join(tmp, "packages", name, "dist"))).toBe(false);
    }
  }, 120_000);
});
