import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, parse } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Receiver } from "../support/receiver.ts";
import { TestSystem } from "../support/system.ts";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "node_modules", ".bin");
// The workspace's Node 24 first; npm and tsc from the workspace too.
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ""}` };
const version = (name: string) =>
  (JSON.parse(readFileSync(join(ROOT, "packages", name, "package.json"), "utf8")) as { version: string }).version;

/** Every node_modules a resolution from `dir` would look in. */
function nodeModulesAbove(dir: string): string[] {
  const found: string[] = [];
  for (let d = dirname(dir); d !== parse(d).root; d = dirname(d)) if (existsSync(join(d, "node_modules"))) found.push(d);
  if (existsSync(join(parse(dir).root, "node_modules"))) found.push(parse(dir).root);
  return found;
}

/**
 * The client and the CLI as a user gets them: packed the way `npm publish` packs them (prepack
 * builds dist/, since Node does not strip types under node_modules) in a copy of the workspace,
 * then installed from the two tarballs alone into an empty folder, with an empty npm cache and
 * offline, so a dependency that only the workspace has (an `@evb/*` package, zod) fails the
 * install or the run. Then used from that folder against a real broker.
 */
describe("the publishable packages, installed from their tarballs alone", () => {
  const build = mkdtempSync(join(tmpdir(), "evb-pack-"));
  const app = mkdtempSync(join(tmpdir(), "evb-app-"));
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  let sys: TestSystem;
  let rx: Receiver;
  const tarballs: Record<string, string> = {};

  function pack(name: "client" | "cli"): string {
    const dir = join(build, "packages", name);
    cpSync(join(ROOT, "packages", name), dir, { recursive: true, filter: (src) => !src.includes("node_modules") });
    const out = execFileSync("npm", ["pack", "--pack-destination", build, "--silent"], { cwd: dir, env, encoding: "utf8" });
    return join(build, out.trim().split("\n").pop() as string);
  }

  const inApp = (cmd: string, args: string[], extra: Record<string, string> = {}) =>
    run(cmd, args, { cwd: app, env: { ...env, EVB_URL: sys.gatewayUrl, ...extra }, timeout: 60_000 });
  const evb = (...args: string[]) => inApp(join(app, "node_modules", ".bin", "evb"), args);

  beforeAll(async () => {
    // The build needs tsc and @types/node: the copy sees the workspace's node_modules. The app
    // folder is elsewhere, with no node_modules above it.
    cpSync(join(ROOT, "tsconfig.base.json"), join(build, "tsconfig.base.json"));
    symlinkSync(join(ROOT, "node_modules"), join(build, "node_modules"));
    tarballs.client = pack("client");
    tarballs.cli = pack("cli");
    writeFileSync(join(app, "package.json"), '{"name":"app","private":true,"type":"module"}\n');
    const cache = join(app, ".npm-cache");
    mkdirSync(cache);
    execFileSync("npm", ["install", tarballs.client, tarballs.cli, "--offline", "--cache", cache, "--no-audit", "--no-fund"], {
      cwd: app,
      env,
      encoding: "utf8",
    });
    rx = await Receiver.start();
    sys = await TestSystem.start({
      notifiers: 1,
      env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", NOTIFIER_POLL_MS: "200", NOTIFIER_SWEEP_MS: "1000", WEBHOOK_SECRETS: secret },
    });
  }, 180_000);
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
    rmSync(build, { recursive: true, force: true });
    rmSync(app, { recursive: true, force: true });
  });

  it("install with nothing of the workspace: their own names, README and LICENSE, JavaScript only", async () => {
    expect(nodeModulesAbove(app)).toEqual([]);
    const installed = (name: string) => join(app, "node_modules", name);
    const client = JSON.parse(readFileSync(join(installed("evb-client"), "package.json"), "utf8"));
    const cli = JSON.parse(readFileSync(join(installed("evb-cli"), "package.json"), "utf8"));
    expect(client.dependencies ?? {}).toEqual({});
    expect(cli.dependencies).toEqual({ "evb-client": `^${version("client")}` });
    for (const [name, manifest] of [
      ["evb-client", client],
      ["evb-cli", cli],
    ] as const) {
      // npm takes a LICENSE only from the package's own directory: each carries the root's.
      expect(readFileSync(join(installed(name), "LICENSE"), "utf8"), `${name} LICENSE`).toBe(readFileSync(join(ROOT, "LICENSE"), "utf8"));
      expect(manifest.license).toBe("Apache-2.0");
      const readme = readFileSync(join(installed(name), "README.md"), "utf8");
      expect(readme, `${name} README`).toMatch(new RegExp(`npm install (--global )?${name}\\b`));
      expect(readme, `${name} README`).not.toMatch(/\.\.\/shared|[Ii]ssue \d/);
      expect(existsSync(join(installed(name), "src")), `${name} ships no sources`).toBe(false);
    }
    // Only the two packages: nothing else was installed, and zod (which the workspace has) is not reachable.
    expect(
      readdirSync(join(app, "node_modules"))
        .filter((n) => !n.startsWith("."))
        .sort(),
    ).toEqual(["evb-cli", "evb-client"]);
    await expect(inApp("node", ["--input-type=module", "-e", 'await import("zod")'])).rejects.toThrow(/zod/);
    // The pack left the copied manifests as they were: nothing is rewritten at pack time.
    for (const name of ["client", "cli"]) {
      const manifest = (root: string) => readFileSync(join(root, "packages", name, "package.json"), "utf8");
      expect(manifest(build), `${name}/package.json after pack`).toBe(manifest(ROOT));
      expect(existsSync(join(build, "packages", name, "dist")), `${name}/dist after postpack`).toBe(false);
    }
  });

  it("evb --help and evb --version run from the install", async () => {
    expect((await evb("--help")).stdout).toContain("evb — the event broker's command line");
    expect((await evb("--version")).stdout).toBe(`evb ${version("cli")}\n`);
  });

  it("evb publishes and subscribes against a real gateway", async () => {
    const topic = `pkg-cli-${randomBytes(3).toString("hex")}`;
    await evb("topic", "open", topic);
    const add = JSON.parse((await evb("sub", "add", topic, rx.url("/cli"), "--json")).stdout) as { subscriptionId: string };
    const sent = JSON.parse((await evb("publish", topic, "from the cli", "--json")).stdout) as { status: string; eventId: string };
    expect(sent.status).toBe("SUCCESS");
    await rx.until(() => rx.deliveredIds(add.subscriptionId).includes(sent.eventId), "the CLI's event");
    expect((await evb("event", "get", sent.eventId)).stdout).toMatch(/^content\s+from the cli$/m);
    expect((await evb("sub", "rm", add.subscriptionId)).stdout).toBe(`removed ${add.subscriptionId}\n`);
  });

  it("the client README's publish and subscribe run from the install as written", async () => {
    // Only the addresses change: the README's broker and receiver become this test's.
    const readme = readFileSync(join(app, "node_modules", "evb-client", "README.md"), "utf8");
    const block = (heading: string) => readme.split(`## ${heading}\n`)[1]?.match(/```ts\n([\s\S]*?)```/)?.[1] ?? "";
    const code = `${block("Publish")}\n${block("Subscribe")}`
      .replaceAll("http://127.0.0.1:8080", sys.gatewayUrl)
      .replaceAll("https://receiver.example/hook", rx.url("/readme"));
    expect(code).toContain("m.subscribe(");
    writeFileSync(join(app, "readme.ts"), code);
    const { stdout } = await inApp("node", ["readme.ts"]);
    expect(stdout).toBe("SUCCESS hello\n100101 topic not exist\n");
  });

  it("the client publishes, subscribes and verifies the signed callback", async () => {
    const topic = `pkg-client-${randomBytes(3).toString("hex")}`;
    writeFileSync(
      join(app, "publish.ts"),
      [
        'import { BrokerClientM, decodeContent, type SendResult } from "evb-client";',
        'const m = new BrokerClientM({ baseUrl: new URL("/event-m", process.env.EVB_URL).href });',
        "const [topic, url] = process.argv.slice(2) as [string, string];",
        "await m.open(topic);",
        "const subscriptionId = await m.subscribe(topic, url);",
        'const sent: SendResult = await m.publish(topic, "from the client");',
        "const event = await m.getEvent(sent.eventId as string);",
        "console.log(JSON.stringify({ subscriptionId, status: sent.status, eventId: sent.eventId, content: decodeContent(event) }));",
      ].join("\n"),
    );
    const out = JSON.parse((await inApp("node", ["publish.ts", topic, rx.url("/client")])).stdout) as Record<string, string>;
    expect(out).toMatchObject({ status: "SUCCESS", content: "from the client" });
    await rx.until(() => rx.deliveredIds(out.subscriptionId).includes(out.eventId as string), "the client's event");
    const callback = rx.requests.find((r) => r.path === "/client" && r.status === 200);
    writeFileSync(join(app, "callback.json"), JSON.stringify({ headers: callback?.headers, body: callback?.body }));
    writeFileSync(
      join(app, "verify.js"),
      'import { readFileSync } from "node:fs";\n' +
        'import { decodeContent, verifyWebhook } from "evb-client";\n' +
        'const { headers, body } = JSON.parse(readFileSync("callback.json", "utf8"));\n' +
        "const r = verifyWebhook({ secret: process.env.WEBHOOK_SECRET, headers, body });\n" +
        'console.log(r.ok ? decodeContent(r.payload.event) : r.reason, verifyWebhook({ secret: "whsec_AAAA", headers, body }).ok);\n',
    );
    expect((await inApp("node", ["verify.js"], { WEBHOOK_SECRET: secret })).stdout).toBe("from the client false\n");
  });
});
