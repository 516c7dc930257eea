import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@evb/devstack";
import { runAttack } from "../scripts/attack/run.ts";
import { rawCall } from "./support/raw-http.ts";
import { TestSystem } from "./support/system.ts";

const ROOT = join(import.meta.dirname, "..");

/** `npm run attack -- args` as a child process. */
function attack(args: string[]) {
  return spawnSync(process.execPath, ["scripts/attack.ts", ...args], { cwd: ROOT, encoding: "utf8", timeout: 90_000 });
}

// Crash survived: none; hostile callers on a healthy system. `npm run attack` (scripts/attack.ts)
// at its --quick sizes: every shape answered as it should and the gateway alive after each. The
// loop-delay figures it prints are a goal for the operator, never asserted here.
describe("npm run attack", () => {
  let sys: TestSystem;
  let base: string;
  beforeAll(async () => {
    // F10 subscribes callbacks to a receiver the script runs on 127.0.0.1.
    sys = await TestSystem.start({ env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8" } });
    base = sys.gatewayUrl;
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("prints the table and exits 0 from the command line", () => {
    const r = attack(["--url", base, "--quick", "--shape", "query-plus-250KiB"]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/\[1\/1\] F2 query-plus-250KiB: GET/);
    expect(r.stdout).toMatch(/\| F2 query-plus-250KiB +\| +1 \| +1\/1 \|/);
    expect(r.stdout).toMatch(/every answer right and the gateway alive; exit 0/);
  });

  it("a wrong command line exits 2 and names the shapes", () => {
    const r = attack(["--shape", "no-such-shape"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/no shape "no-such-shape"; the shapes are: .*F4 pipeline-2000/);
  });

  it("nothing at --url exits 1 and says to start the stack", async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const r = attack(["--url", url, "--quick"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`nothing answers at ${url}`);
    expect(r.stderr).toContain("start the stack with `npm start`");
  });

  // Last: on a gateway that F1 kills, the tests above still ran against a live one.
  it("answers every shape correctly at --quick sizes and stays alive", async () => {
    const lines: string[] = [];
    const { verdict } = await runAttack({ url: base, quick: true, strict: false, shapes: [], say: (l) => lines.push(l) });
    const shapes = verdict.rows.filter((r) => r.family !== "idle");
    expect(shapes.map((r) => r.family)).toEqual(expect.arrayContaining(["F1", "F2", "F3", "F4", "F5", "F6", "F10"]));
    const wrong = shapes.filter((r) => r.problems.length > 0).map((r) => `${r.family} ${r.name}: ${r.problems.join("; ")}`);
    expect(wrong, lines.join("\n")).toEqual([]);
    for (const r of shapes) expect(r.answersOk, r.name).toBe(r.requests);
    expect(sys.exitedProcesses()).toEqual([]);
    expect((await rawCall(base, { path: "/livez", timeoutMs: 5_000 })).status).toBe(200);
    // The subscriptions F10 made are gone again.
    const listed = (await rawCall(base, { path: "/event-e/admin/listSubscription" })).json as Record<string, object>;
    for (const subs of Object.values(listed)) expect(Object.keys(subs)).toEqual([]);
  });
});
