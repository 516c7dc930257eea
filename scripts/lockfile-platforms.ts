/**
 * `npm run fix-lockfile`: puts back the lockfile entries of platform-specific optional packages
 * (e.g. @biomejs/cli-darwin-arm64) that this machine's npm registry does not serve.
 *
 * Why: when the registry answers 404 for an optional dependency, `npm install` silently leaves
 * it out of package-lock.json, and `npm ci` then refuses the lockfile as "not in sync". The
 * entries only need name, version and platform: npm ci skips packages for other platforms.
 * `--check` exits 1 (for the tests) instead of writing.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const file = join(import.meta.dirname, "..", "package-lock.json");
interface Entry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  optionalDependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}
const lock = JSON.parse(readFileSync(file, "utf8")) as { packages: Record<string, Entry> };

const OS = ["android", "darwin", "linux", "win32", "freebsd", "openbsd", "netbsd", "sunos", "aix"];
const CPU = ["arm64", "x64", "ia32", "arm", "ppc64", "s390x", "riscv64", "loong64"];

function platformOf(name: string): Pick<Entry, "os" | "cpu" | "libc"> {
  const parts = name.split("/").pop()?.split("-") ?? [];
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  const out: Pick<Entry, "os" | "cpu" | "libc"> = {};
  if (os) out.os = [os];
  if (cpu) out.cpu = [cpu];
  if (os === "linux") out.libc = [parts.includes("musl") ? "musl" : "glibc"];
  return out;
}

const missing: string[] = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, range] of Object.entries(entry.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${dep}`;
    const top = `node_modules/${dep}`;
    if (lock.packages[nested] || lock.packages[top]) continue;
    if (!/^\d+\.\d+\.\d+/.test(range)) continue; // only exact pins can be written without the registry
    missing.push(top);
    lock.packages[top] = { version: range, ...(entry.dev ? { dev: true } : {}), optional: true, ...platformOf(dep) };
  }
}

if (process.argv.includes("--check")) {
  if (missing.length > 0) {
    process.stderr.write(`package-lock.json lacks ${missing.join(", ")}; run \`npm run fix-lockfile\` so that npm ci accepts it.\n`);
    process.exit(1);
  }
} else if (missing.length > 0) {
  lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  process.stdout.write(`added ${missing.length} lockfile entries: ${missing.join(", ")}\n`);
}
