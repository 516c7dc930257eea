import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

/**
 * The documents a user reads: README.md, docs/ and each package's README. ARCHITECTURE.md is the
 * maintainers' map and may name the history it was built in.
 */
function userDocs(): string[] {
  const out = [join(ROOT, "README.md")];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".md")) out.push(p);
    }
  };
  walk(join(ROOT, "docs"));
  for (const dir of ["packages", "services"])
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true }))
      if (e.isDirectory()) {
        const readme = join(ROOT, dir, e.name, "README.md");
        try {
          readFileSync(readme);
          out.push(readme);
        } catch {
          // no README
        }
      }
  return out;
}

/** What only the developers of this project can follow: their issue numbers, their reference folder, their machines' paths. */
const INSIDER = [
  { what: "an issue number", re: /\bissues? #?\d+/i },
  { what: "a link into the developers' shared folder", re: /\.\.\/shared\b/ },
  { what: "the reference's file names", re: /\bbehaviour\.md\b|\binterface\.md\b/ },
  { what: "a path of the development machines", re: /\/work\/(?:main|wt|shared)\b/ },
  { what: "a lock file of the development machines", re: /\bflock\b/ },
];

describe("user-facing docs", () => {
  it("name no issue numbers, no developers' files and no paths of their machines", () => {
    const found: string[] = [];
    for (const file of userDocs()) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          for (const { what, re } of INSIDER)
            if (re.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${what}: ${line.trim().slice(0, 120)}`);
        });
    }
    expect(found).toEqual([]);
  });

  it("the check finds what it looks for", () => {
    const sample = ["as issue 23 said", "see ../shared/reference", "behaviour.md 7.1", "flock /work/wt/bench.lock"];
    for (const line of sample)
      expect(
        INSIDER.some(({ re }) => re.test(line)),
        line,
      ).toBe(true);
    expect(INSIDER.some(({ re }) => re.test("see docs/protocols.md and docs/jsonrpc.md"))).toBe(false);
  });
});
