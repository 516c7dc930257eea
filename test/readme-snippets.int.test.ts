import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readmeSnippet } from "./support/readme-snippets.ts";
import { Receiver } from "./support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "./support/system.ts";

const run = promisify(execFile);
// Inside the repository, so that the TypeScript snippet's `evb-client` resolves as in the workspace
// (its sources, under the `development` condition).
const SCRATCH = join(import.meta.dirname, "..", ".cache", "readme-snippets");

// Crash survived: none. The README's snippets as written, against a real broker: only the
// addresses change (the gateway's 127.0.0.1:8080 and the receiver's 127.0.0.1:9999 become this
// stack's), so a snippet that hard-codes what only one ledger answers (an eventId) or names an
// operation wrongly fails here.
describe("README snippets against the real stack", () => {
  let sys: TestSystem;
  let rx: Receiver;
  const local = (code: string) =>
    code.replaceAll("http://127.0.0.1:8080", sys.gatewayUrl).replaceAll("http://127.0.0.1:9999", new URL(rx.url()).origin);
  // curl prints a reply with no newline after it; a .curlrc of the test's own adds one, so each
  // reply is a line of its own (command substitution drops it again).
  const bash = async (code: string) =>
    (await run("bash", ["-euo", "pipefail", "-c", local(code)], { timeout: 60_000, env: { ...process.env, CURL_HOME: SCRATCH } })).stdout;

  beforeAll(async () => {
    rx = await Receiver.start();
    sys = await TestSystem.start({ notifiers: 1, env: { ...QUICK_CALLBACKS_ENV } });
    mkdirSync(SCRATCH, { recursive: true });
    writeFileSync(join(SCRATCH, ".curlrc"), 'write-out = "\\n"\n');
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
  });

  it("Try it: getEvent finds the event by the eventId the publish answered", async () => {
    const out = (await bash(readmeSnippet("Try it", "sh"))).split("\n");
    const sent = JSON.parse(out.find((l) => l.startsWith('{"status"')) as string) as { status: string; eventId: string };
    expect(sent.status).toBe("SUCCESS");
    const got = out.find((l) => l.includes('"content":"aGVsbG8g5LiW55WM"'));
    expect(got, out.join("\n")).toContain(`"eventId":"${sent.eventId}"`);
  });

  it("Publishing many events at once: one SUCCESS per event, in order", async () => {
    const out = (await bash(readmeSnippet("Publishing many events at once", "sh"))).split("\n");
    const results = JSON.parse(out.find((l) => l.startsWith("[")) as string) as { status: string }[];
    expect(results.map((r) => r.status)).toEqual(["SUCCESS", "SUCCESS"]);
  });

  it("Callbacks: listSubscription, asked for the nodes listNodes answers, shows the new subscription", async () => {
    const code = readmeSnippet("Callbacks", "sh");
    // Terminal 1's receiver is this test's; terminal 2 runs as written.
    const terminal2 = code.slice(code.indexOf("# terminal 2"));
    const out = await bash(terminal2);
    const lines = out.trimEnd().split("\n");
    const listing = lines.find((l) => l.includes('"subscribeId"'));
    expect(listing, out).toBeDefined();
    const data = (JSON.parse(listing as string) as { data: Record<string, Record<string, { topicName: string }>> }).data;
    expect(Object.keys(data)).toEqual([new URL(sys.gatewayUrl).host]);
    expect(Object.values(Object.values(data)[0] ?? {}).map((r) => r.topicName)).toEqual(["orders/#"]);
    expect(lines.at(-1)).toBe("true"); // unSubscribe
  });

  it("Command line: evb event get finds the event by the eventId evb publish answered", async () => {
    // The block is a list of commands with placeholders (<subscriptionId>); its eventId pair runs.
    const code = readmeSnippet("Command line: `evb`", "sh")
      .split("\n")
      .filter((l) => l.includes("EVENT_ID"));
    expect(code).toHaveLength(2);
    const evb = join(import.meta.dirname, "..", "node_modules", ".bin");
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", code.join("\n")], {
      timeout: 60_000,
      env: { ...process.env, PATH: `${evb}:${process.env.PATH}`, EVB_URL: sys.gatewayUrl },
    });
    expect(stdout).toMatch(/^eventId\s+[0-9a-f]{8}-\d+-\d+\ntopic\s+orders\/eu\ncontent\s+hello$/m);
  });

  it("Client: the TypeScript snippet runs with node as written", async () => {
    const file = join(SCRATCH, `client-${randomBytes(4).toString("hex")}.ts`);
    writeFileSync(file, local(readmeSnippet("Client: `evb-client`", "ts")));
    try {
      const { stdout } = await run(process.execPath, ["--conditions=development", file], { timeout: 60_000 });
      expect(stdout).toMatch(/^SUCCESS [0-9a-f]{8}-\d+-\d+ hello$/m);
      expect(stdout).toContain("100101 topic not exist");
    } finally {
      rmSync(file, { force: true });
    }
  });
});
