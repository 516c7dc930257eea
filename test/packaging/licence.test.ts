import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (...p: string[]) => readFileSync(join(ROOT, ...p), "utf8");

/** MD5 of apache.org's LICENSE-2.0.txt, as licence scanners recognise it: any edit shows here. */
const APACHE_2_MD5 = "3b83ef96387f14655fc854ddc3c6bd57";

const manifests = [
  "package.json",
  ...["packages", "services"].flatMap((dir) =>
    readdirSync(join(ROOT, dir), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(dir, d.name, "package.json")),
  ),
];

// The broker replaces one published under Apache-2.0 and takes that licence; the two packages
// published to npm carry the text themselves, since npm packs a LICENSE only from the package's
// own directory.
describe("the licence", () => {
  it("is the unmodified Apache License 2.0 text, at the root and in each published package", () => {
    const root = read("LICENSE");
    expect(createHash("md5").update(root).digest("hex")).toBe(APACHE_2_MD5);
    for (const dir of ["packages/client", "packages/cli"]) expect(read(dir, "LICENSE"), dir).toBe(root);
  });

  it("is declared as Apache-2.0 by the root and every workspace package.json", () => {
    expect(manifests.length).toBeGreaterThan(10);
    for (const m of manifests) expect((JSON.parse(read(m)) as { license?: string }).license, m).toBe("Apache-2.0");
  });

  it("is declared in the lockfile as in the manifests, so `npm ci` sees no drift", () => {
    const lock = JSON.parse(read("package-lock.json")) as { packages: Record<string, { license?: string }> };
    for (const m of manifests) {
      const key = m === "package.json" ? "" : m.replace(/\/package\.json$/, "");
      expect(lock.packages[key]?.license, key || "root").toBe("Apache-2.0");
    }
  });
});
