import { readFileSync } from "node:fs";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { main } from "./main.ts";

function run(argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on("data", (c: Buffer) => out.push(c.toString()));
  stderr.on("data", (c: Buffer) => err.push(c.toString()));
  return main(argv, { stdout, stderr, stdin: new PassThrough() }, {}).then((code) => ({ code, out: out.join(""), err: err.join("") }));
}

describe("evb --version", () => {
  // Regression: `evb --version` was an unknown flag, a usage error (exit 2).
  it("prints the package's version and exits 0, as -V too", async () => {
    const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const r = await run([flag]);
      expect(r).toEqual({ code: 0, out: `evb ${version}\n`, err: "" });
    }
  });

  it("is listed in the usage", async () => {
    expect((await run(["--help"])).out).toContain("--version, -V");
  });
});
