/**
 * Makes a workspace package publishable. In the repository the packages run from their .ts
 * sources (Node strips the types), but Node refuses to strip types under node_modules, so a
 * package installed from npm must ship JavaScript. `prepack` runs this with `build`: tsc emits
 * dist/ (JS and .d.ts), and package.json is rewritten to point `exports`, `bin` and `files` at
 * dist/ (the source manifest kept in package.json.source); `postpack` runs it with `restore`.
 *
 * Usage (from the package directory): node ../../scripts/pack-manifest.ts build|restore
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const mode = process.argv[2];
const cwd = process.cwd();
const manifest = join(cwd, "package.json");
const saved = join(cwd, "package.json.source");

const toDist = (p: string) => p.replace(/^\.\/(.*)\.ts$/, "./dist/$1.js");

if (mode === "build") {
  rmSync(join(cwd, "dist"), { recursive: true, force: true });
  execFileSync(join(import.meta.dirname, "..", "node_modules", ".bin", "tsc"), ["-p", "tsconfig.build.json"], { cwd, stdio: "inherit" });
  const pkg = JSON.parse(readFileSync(manifest, "utf8")) as Record<string, unknown>;
  writeFileSync(saved, readFileSync(manifest));
  const exports = pkg.exports as Record<string, string>;
  pkg.exports = Object.fromEntries(
    Object.entries(exports).map(([k, v]) => [k, { types: toDist(v).replace(/\.js$/, ".d.ts"), default: toDist(v) }]),
  );
  if (pkg.bin) pkg.bin = Object.fromEntries(Object.entries(pkg.bin as Record<string, string>).map(([k, v]) => [k, toDist(v)]));
  pkg.files = ["dist"];
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (mode === "restore") {
  if (existsSync(saved)) renameSync(saved, manifest);
  rmSync(join(cwd, "dist"), { recursive: true, force: true });
} else {
  console.error("usage: node ../../scripts/pack-manifest.ts build|restore");
  process.exitCode = 2;
}
