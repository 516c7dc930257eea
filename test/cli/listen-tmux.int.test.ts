import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrokerClientM } from "evb-client";
import { TestSystem } from "../support/system.ts";
import { EVB_PATH, runEvb } from "./run-evb.ts";

// Crash survived: Ctrl-C of `evb listen` in a real terminal (tmux): the listener it subscribed
// is removed from the broker before it exits. The callbacks it printed were really signed by
// the notifier, and `evb verify` accepts the ones it saved and rejects a tampered copy.
describe("evb listen in a terminal", () => {
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const socket = `evb-test-${randomBytes(4).toString("hex")}`;
  const dir = mkdtempSync(join(tmpdir(), "evb-listen-"));
  let sys: TestSystem;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "evb");

  async function waitForScreen(re: RegExp, what: string): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const text = screen();
      if (re.test(text)) return text;
      if (Date.now() > deadline) throw new Error(`terminal never showed ${what}:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: { CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8", NOTIFIER_POLL_MS: "200", NOTIFIER_SWEEP_MS: "1000", WEBHOOK_SECRETS: secret },
    });
  });
  afterAll(async () => {
    try {
      tmux("kill-server");
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
    await sys?.stop();
  });

  it("prints verified callbacks, saves them for evb verify, and unsubscribes on Ctrl-C", async () => {
    const topic = `listen.${randomBytes(4).toString("hex")}`;
    const client = new BrokerClientM({ baseUrl: `${sys.gatewayUrl}/event-m` });
    await client.open(`${topic}/a`);
    tmux("new-session", "-d", "-s", "evb", "-x", "220", "-y", "50", "env", `PATH=${EVB_PATH}`, "bash", "--norc", "--noprofile");
    const cmd = `evb listen --url ${sys.gatewayUrl} --subscribe '${topic}/#' --secret '${secret}' --save ${dir}; echo "EXIT=$?"`;
    tmux("send-keys", "-t", "evb", cmd, "Enter");
    const started = await waitForScreen(/subscribed ([0-9a-f-]{36}) to /, "the subscription");
    const id = (/subscribed ([0-9a-f-]{36})/.exec(started) as RegExpExecArray)[1] as string;
    const node = (await client.listNodes())[0] as string;
    expect(Object.keys((await client.listSubscription(node))[node] ?? {})).toContain(id);

    const a = await client.publish(`${topic}/a`, "hello from the broker");
    const b = await client.publish(`${topic}/a`, "second ✓");
    await waitForScreen(/#2 .*second ✓/, "two callbacks");
    const text = screen();
    expect(text).toContain(`#1 ${topic}/a ${a.eventId} [signature ok] hello from the broker`);
    expect(text).toContain(`#2 ${topic}/a ${b.eventId} [signature ok] second ✓`);

    tmux("send-keys", "-t", "evb", "C-c");
    const end = await waitForScreen(/EXIT=\d+/, "the exit");
    expect(end).toContain(`unsubscribed ${id}`);
    expect(end).toContain("EXIT=0");
    expect(Object.keys((await client.listSubscription(node))[node] ?? {})).not.toContain(id);

    const ok = await runEvb(["verify", "--secret", secret, "--body", join(dir, "1.body"), "--headers", join(dir, "1.headers")]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^valid: msg_/);
    const tampered = join(dir, "tampered.body");
    writeFileSync(tampered, readFileSync(join(dir, "1.body"), "utf8").replace(a.eventId as string, b.eventId as string));
    const bad = await runEvb(["verify", "--secret", secret, "--body", tampered, "--headers", join(dir, "1.headers"), "--json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toEqual({ valid: false, reason: "no signature matches the secret" });
  });
});
