import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrokerClientM } from "evb-client";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { runEvb } from "./run-evb.ts";

// Crash survived: none. The `evb` binary, run as a child process against a real broker with
// Basic authentication on: human and --json output, stdin publishing, and the documented exit
// codes for broker errors (1), usage (2), no connection (3) and HTTP refusals (4).
describe("evb command line", () => {
  const basic = "cli:secret";
  let sys: TestSystem;
  let env: Record<string, string>;
  const topic = `cli.${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      env: {
        API_BASIC_AUTH: basic,
        API_KEYS: "true",
        ...QUICK_CALLBACKS_ENV,
      },
    });
    env = { EVB_URL: sys.gatewayUrl, EVB_BASIC: basic };
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("opens, checks and lists topics, for people and with --json", async () => {
    expect(await runEvb(["topic", "open", topic], { env })).toMatchObject({ code: 0, stdout: `opened ${topic}\n` });
    expect(await runEvb(["topic", "exist", topic, "--json"], { env })).toMatchObject({ code: 0, stdout: "true\n" });
    expect(await runEvb(["--variant", "E", "topic", "exist", `${topic}.no`], { env })).toMatchObject({
      code: 0,
      stdout: `${topic}.no does not exist\n`,
    });
    const state = await runEvb(["--variant", "L", "topic", "state", topic, "--json"], { env });
    expect(JSON.parse(state.stdout)).toMatchObject({ topicName: topic, sequenceNumber: 0, lastSender: null });
    const list = await runEvb(["topic", "list"], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${topic.replace(".", "\\.")}\\s+0\\s+0\\s`, "m"));
  });

  it("publishes each line of standard input as one event, in order, with progress on stderr", async () => {
    const r = await runEvb(["publish", topic, "--json", "--ext", "event-format=text"], { env, input: "first\nsecond 世界\n\nthird\n" });
    expect(r.code, r.stderr).toBe(0);
    const results = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { status: string; eventId: string });
    expect(results.map((x) => x.status)).toEqual(["SUCCESS", "SUCCESS", "SUCCESS"]);
    expect(results.map((x) => Number(x.eventId.split("-")[1]))).toEqual([1, 2, 3]);
    expect(r.stderr).toContain(`published 3 events to ${topic}`);
    const got = await runEvb(["event", "get", results[1]?.eventId as string], { env });
    expect(got.code).toBe(0);
    expect(got.stdout).toContain("content   second 世界");
    expect(got.stdout).toContain("event-format text");
    const one = await runEvb(["--variant", "L", "publish", topic, "from an argument"], { env });
    expect(one).toMatchObject({ code: 0, stdout: expect.stringMatching(/^SUCCESS [0-9a-f]{8}-4-\d+\n$/) });
  });

  it("exits 1 with the broker's code and message on a broker error", async () => {
    for (const variant of ["L", "M", "E"]) {
      const r = await runEvb(["--variant", variant, "topic", "close", `${topic}.missing`], { env });
      expect(r.code, variant).toBe(1);
      expect(r.stderr).toContain("broker error 100101: topic not exist");
    }
    const json = await runEvb(["event", "get", "abc", "--json"], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 100302, message: "eventId is illegal", operation: "rest/getEvent" } });
  });

  it("exits 2 on usage errors, 3 without a broker, 4 when the broker refuses the credentials", async () => {
    expect((await runEvb(["frobnicate"], { env })).code).toBe(2);
    expect((await runEvb(["topic", "open"], { env })).stderr).toContain("missing <topic>");
    const l = await runEvb(["--variant", "L", "sub", "add", "t", "http://127.0.0.1:1/"], { env });
    expect(l.code).toBe(2);
    expect(l.stderr).toContain("variant L has no callback subscriptions");
    expect((await runEvb(["--bogus"], { env })).code).toBe(2);
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, "127.0.0.1", r));
    const port = (free.address() as { port: number }).port;
    await new Promise<void>((r) => free.close(() => r()));
    const down = await runEvb(["topic", "exist", "x", "--url", `http://127.0.0.1:${port}`], { env });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain("cannot reach");
    const anon = await runEvb(["topic", "exist", "x"], { env: { ...env, EVB_BASIC: "cli:wrong" } });
    expect(anon.code).toBe(4);
    expect(anon.stderr).toContain("HTTP 401");
  });

  it("sends --token as a bearer API key", async () => {
    const made = spawnSync(process.execPath, ["scripts/keys.ts", "create", "--roles", "read", "--groups", "*", "--name", "cli"], {
      cwd: join(import.meta.dirname, "..", ".."),
      env: { ...process.env, ...sys.env },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(made.status, made.stderr).toBe(0);
    const keyed = { EVB_URL: sys.gatewayUrl };
    const ok = await runEvb(["topic", "exist", topic, "--token", made.stdout.trim()], { env: keyed });
    expect(ok).toMatchObject({ code: 0, stdout: `${topic} exists\n` });
    const refused = await runEvb(["topic", "open", `${topic}.ro`, "--token", made.stdout.trim()], { env: keyed });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain("HTTP 403");
    expect((await runEvb(["topic", "exist", topic, "--token", "evbk_000000000000_nope"], { env: keyed })).code).toBe(4);
  });

  it("adds, lists and removes subscriptions; lists and replays dead letters", async () => {
    const rx = await Receiver.start();
    try {
      let failing = true;
      rx.answer = () => ({ status: failing ? 503 : 200 });
      const t = `${topic}/dl`;
      await runEvb(["topic", "open", t], { env });
      const add = await runEvb(["sub", "add", `${topic}/+`, rx.url(), "--json"], { env });
      expect(add.code, add.stderr).toBe(0);
      const id = (JSON.parse(add.stdout) as { subscriptionId: string }).subscriptionId;
      for (const variant of ["L", "M", "E"]) {
        const list = await runEvb(["--variant", variant, "sub", "list"], { env });
        expect(list.stdout, variant).toContain(id);
      }
      await runEvb(["publish", t, "dead on arrival"], { env });
      const client = new BrokerClientM({ baseUrl: `${sys.gatewayUrl}/event-m`, basic });
      const deadline = Date.now() + 30_000;
      while (!(await client.deadLetters()).some((d) => d.subscriptionId === id)) {
        if (Date.now() > deadline) throw new Error("no dead letter");
        await new Promise((r) => setTimeout(r, 200));
      }
      const dl = await runEvb(["dead-letters", "list"], { env });
      expect(dl.stdout).toMatch(new RegExp(`^${id}\\s+${topic.replace(".", "\\.")}/\\+\\s+\\S+\\s+2\\s+1\\s`, "m"));
      failing = false;
      const replay = await runEvb(["dead-letters", "replay", id], { env });
      expect(replay).toMatchObject({ code: 0, stdout: `replayed ${id}\n` });
      await rx.until(() => rx.deliveredIds(id).length === 1, "the replayed event");
      expect(await runEvb(["sub", "rm", id], { env })).toMatchObject({ code: 0, stdout: `removed ${id}\n` });
      expect((await runEvb(["sub", "rm", id], { env })).code).toBe(1);
    } finally {
      await rx.close();
    }
  });

  it("sub settings, pause, resume and rotate-secret change a subscription's own settings; the secret is printed once", async () => {
    const rx = await Receiver.start();
    try {
      const t = `${topic}/own`;
      await runEvb(["topic", "open", t], { env });
      const alerts = rx.url("/alerts");
      const add = await runEvb(["sub", "add", t, rx.url(), "--max-rate", "20", "--paused", "--alert-url", alerts, "--json"], { env });
      expect(add.code, add.stderr).toBe(0);
      const id = (JSON.parse(add.stdout) as { subscriptionId: string }).subscriptionId;
      const shown = await runEvb(["sub", "settings", id], { env });
      expect(shown.stdout).toMatch(/PAUSED since/);
      expect(shown.stdout).toMatch(/max rate: +20\/s/);
      expect(shown.stdout).toContain(`alerts to:      ${alerts}`);
      // A bad alert URL at subscribe: the broker's 100513, nothing subscribed.
      const badAlert = await runEvb(["sub", "add", t, rx.url(), "--alert-url", "not a url", "--json"], { env });
      expect(badAlert.code).toBe(1);
      expect(JSON.parse(badAlert.stdout)).toMatchObject({ error: { code: 100513 } });
      const cleared = await runEvb(["sub", "settings", id, "--alert-url", "none", "--json"], { env });
      expect(JSON.parse(cleared.stdout)).toMatchObject({ alertUrl: null });
      const changed = await runEvb(["sub", "settings", id, "--max-rate", "default", "--retry-max-attempts", "4", "--json"], { env });
      expect(JSON.parse(changed.stdout)).toMatchObject({ maxRate: null, retryMaxAttempts: 4 });
      expect(JSON.parse((await runEvb(["sub", "resume", id, "--json"], { env })).stdout)).toMatchObject({ paused: false });
      const rotated = await runEvb(["sub", "rotate-secret", id, "--grace-ms", "0"], { env });
      expect(rotated.stdout).toMatch(/new secret \(shown once, keep it\): whsec_/);
      expect((await runEvb(["sub", "settings", id], { env })).stdout).not.toMatch(/whsec_/);
      const bad = await runEvb(["sub", "settings", id, "--window", "0", "--json"], { env });
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 100513 } });
      expect((await runEvb(["sub", "rm", id], { env })).code).toBe(0);
    } finally {
      await rx.close();
    }
  });

  it("attempts lists a subscription's callback attempts, or says plainly that the broker lacks them", async () => {
    expect((await runEvb(["attempts"], { env })).code).toBe(2);
    const r = await runEvb(["attempts", "00000000-0000-4000-8000-000000000000", "--json"], { env });
    // A broker with the attempt log answers 100504 for an unknown subscription.
    if (r.code === 1) expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 100504 } });
    else expect(r).toMatchObject({ code: 4, stderr: expect.stringContaining("no admin/deliveryAttempts") });
  });
});
