import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBrokerError, expectJson200, expectSuccess } from "../support/broker-expect.ts";
import { call } from "../support/http.ts";
import { TestSystem } from "../support/system.ts";

/**
 * The original broker's Java client (weevent-client 1.6.0) is not on Maven Central, so this
 * suite drives a stand-in: test/java-client, a Java 17 program on the same WebSocket library
 * (Java-WebSocket 1.4.0) that speaks STOMP as the reference describes the client (protocols.md
 * §5), with the original spellings (§8). It is built with Maven into .cache/java-client, its
 * Maven repository cached in .cache/m2 (the first run needs Maven Central).
 */
const ROOT = join(import.meta.dirname, "..", "..");
const PROJECT = join(ROOT, "test", "java-client");
const M2 = join(ROOT, ".cache", "m2");
const TARGET = join(ROOT, ".cache", "java-client", "target");
const ORIGINAL = "/weevent-broker";
const NEUTRAL = "/event-broker";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Line = { step: string; ok?: boolean } & Record<string, unknown>;
type Event = { topic: string; content: string; extensions: Record<string, string>; eventId: string };

/** A JDK (a JAVA_HOME with bin/javac): JAVA_HOME first, then the javac on PATH, then /usr/lib/jvm. */
function findJdk(): string {
  const candidates: string[] = [];
  if (process.env.JAVA_HOME) candidates.push(process.env.JAVA_HOME);
  for (const dir of (process.env.PATH ?? "").split(":")) {
    const javac = join(dir, "javac");
    if (dir && existsSync(javac)) candidates.push(dirname(dirname(realpathSync(javac))));
  }
  if (existsSync("/usr/lib/jvm")) {
    const jvms = readdirSync("/usr/lib/jvm").sort((a, b) => Number(b.includes("17")) - Number(a.includes("17")));
    for (const d of jvms) candidates.push(join("/usr/lib/jvm", d));
  }
  const jdk = candidates.find((home) => existsSync(join(home, "bin", "javac")) && existsSync(join(home, "bin", "java")));
  if (!jdk) {
    throw new Error(
      "No JDK with javac found (JAVA_HOME, PATH, /usr/lib/jvm): the Java client stand-in must be compiled. " +
        "Install one with `apt-get install -y openjdk-17-jdk-headless` (.ci/run does).",
    );
  }
  return jdk;
}

/** Builds test/java-client with Maven; the classpath to run it with. Fails loudly when Maven Central is out of reach. */
async function buildStandIn(javaHome: string): Promise<string> {
  const args = ["-B", "-q", "-Dstyle.color=never", `-Dmaven.repo.local=${M2}`, "-f", join(PROJECT, "pom.xml"), "package"];
  const result = await new Promise<{ code: number | null; output: string; error?: Error }>((resolve) => {
    execFile("mvn", args, { env: { ...process.env, JAVA_HOME: javaHome }, maxBuffer: 16 << 20, timeout: 170_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}`, error: err ?? undefined }),
    );
  });
  if ((result.error as { code?: string } | undefined)?.code === "ENOENT") {
    throw new Error("Maven (mvn) is not installed: `apt-get install -y maven` (.ci/run installs it).");
  }
  if (result.code !== 0) {
    throw new Error(
      `Maven could not build the Java client stand-in (test/java-client, exit ${result.code}). The first build downloads ` +
        `org.java-websocket:Java-WebSocket:1.4.0 and Maven's plugins from Maven Central into .cache/m2: check that ` +
        `https://repo.maven.apache.org is reachable (or that .cache/m2 holds them).\n${result.output}`,
    );
  }
  return `${join(TARGET, "classes")}:${join(TARGET, "lib", "*")}`;
}

/** One run of the stand-in's Scenario: its JSON lines as they come, and its exit. */
class JavaRun {
  readonly lines: Line[] = [];
  private readonly child: ChildProcess;
  private stderr = "";
  private stdoutRest = "";
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<number | null>;

  constructor(javaHome: string, classpath: string, args: Record<string, string>) {
    this.child = spawn(
      join(javaHome, "bin", "java"),
      ["-cp", classpath, "org.evb.standin.Scenario", ...Object.entries(args).map(([k, v]) => `${k}=${v}`)],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      const parts = (this.stdoutRest + chunk).split("\n");
      this.stdoutRest = parts.pop() ?? "";
      for (const p of parts) {
        if (p.trim() === "") continue;
        try {
          this.lines.push(JSON.parse(p) as Line);
        } catch {
          this.lines.push({ step: "unparsed", ok: false, text: p });
        }
      }
      for (const w of this.waiters) w();
    });
    this.child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
  }

  /** Everything it printed, for failure messages. */
  get transcript(): string {
    return `${this.lines.map((l) => JSON.stringify(l)).join("\n")}\n--- stderr ---\n${this.stderr}`;
  }

  steps(step: string): Line[] {
    return this.lines.filter((l) => l.step === step);
  }

  step(step: string): Line {
    const found = this.steps(step);
    expect(found, `${step} exactly once\n${this.transcript}`).toHaveLength(1);
    return found[0] as Line;
  }

  async until(check: () => boolean, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`stand-in: condition not met in ${ms} ms\n${this.transcript}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          resolve();
        };
        this.waiters.add(wake);
        setTimeout(wake, 200);
      });
    }
  }

  async exit(ms: number): Promise<number | null> {
    const timer = new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms));
    const code = await Promise.race([this.exited, timer]);
    if (code === "timeout") {
      this.kill();
      throw new Error(`stand-in did not finish in ${ms} ms\n${this.transcript}`);
    }
    return code;
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.pid !== undefined) this.child.kill("SIGKILL");
  }
}

// Crash survived: SIGKILL and restart of the gateway the Java client is connected to (second case).
describe("the original Java client (stand-in on Java-WebSocket 1.4.0) against BRAND=weevent, L at /weevent-broker", () => {
  let sys: TestSystem;
  /** BRAND=weevent, L at /weevent-broker: the gateway the Java client is given. */
  let branded: string;
  /** A default gateway that publishes while the branded one is down. */
  let plain: string;
  let javaHome: string;
  let classpath: string;
  const runs: JavaRun[] = [];
  const T = "com.weevent.test";
  const T2 = "com.weevent.test2";
  /** Under the pattern `com.weevent.test/#` (the M rule: the pattern does not take T itself). */
  const T3 = "com.weevent.test/sub";
  const RESUME = "com.weevent.test.resume";

  beforeAll(async () => {
    javaHome = findJdk();
    const env = { STOMP_POLL_MS: "300", STOMP_HEARTBEAT_MS: "1000" };
    const [cp, system] = await Promise.all([buildStandIn(javaHome), TestSystem.start({ gatewayEnv: env })]);
    classpath = cp;
    sys = system;
    plain = sys.gatewayUrl;
    branded = await sys.addGateway("gateway-weevent", { ...env, BRAND: "weevent", VARIANTS: `L:${ORIGINAL},M:/event-m,E:/event-e` });
    for (const topic of [T, T2, T3, RESUME]) expectSuccess(await call(branded, `${ORIGINAL}/rest/open`, { topic }), "L");
  });
  afterAll(async () => {
    for (const r of runs) r.kill();
    await sys?.stop();
  });

  const run = (args: Record<string, string>) => {
    const r = new JavaRun(javaHome, classpath, { brokerUrl: `${branded}${ORIGINAL}`, ...args });
    runs.push(r);
    return r;
  };
  /** getEvent at the original path, content decoded (L answers it in base64, the client's byte[]). */
  const getEvent = async (eventId: string): Promise<Event> => {
    const e = expectSuccess(await call(branded, `${ORIGINAL}/rest/getEvent`, { eventId }), "L") as Event;
    return { ...e, content: Buffer.from(e.content, "base64").toString("utf8") };
  };

  it("build, publish with extensions, subscribe (topic, list, tagged pattern), MESSAGEs in ledger order, unSubscribe, continue (§5.3)", async () => {
    const r = run({ mode: "cases", topic: T, topic2: T2, topic3: T3 });
    const code = await r.exit(100_000);
    expect(code, r.transcript).toBe(0);
    expect(r.steps("fault"), r.transcript).toEqual([]);
    expect(r.steps("dropped-message"), r.transcript).toEqual([]);
    // Only WebSocket pongs keep it alive (no STOMP heart-beats), with the gateway pinging every second.
    expect(r.steps("closed"), r.transcript).toEqual([]);
    expect(r.lines.filter((l) => l.ok === false)).toEqual([]);

    const port = new URL(branded).port;
    expect(r.step("build").url).toBe(`ws://127.0.0.1:${port}${ORIGINAL}/stomp`);
    // testBuildEventClientGroupIdNotExist: CONNECTED, then admin/validateGroupId answers 200211.
    expect(r.step("build-group-not-exist").code).toBe(200211);
    expectBrokerError(await call(branded, `${ORIGINAL}/admin/validateGroupId`, { groupId: "notExist" }), "L", 200211);

    // testPublishExtensions: the eventId resolves, with the extensions under their original names.
    const published = r.step("publish").result as { status: string; eventId: string };
    expect(published.status).toBe("SUCCESS");
    const e = await getEvent(published.eventId);
    expect(e.topic).toBe(T);
    expect(e.content).toBe("hello world");
    expect(Object.keys(e.extensions).sort()).toEqual(["weevent-format", "weevent-plus", "weevent-tag"]);
    expect(e.extensions["weevent-tag"]).toBe("test");
    expect(e.extensions["weevent-format"]).toBe("json");
    const five = r.step("publish-5").eventIds as string[];
    expect(new Set(five).size).toBe(5);
    for (const [i, id] of five.entries()) expect((await getEvent(id)).content).toBe(`hello world ${i}`);

    // subscribe: a RECEIPT's subscription-id (a UUID), also written into the caller's ext map.
    const ids: Record<string, string> = {};
    for (const step of ["subscribe-single", "subscribe-list", "subscribe-pattern"]) {
      const s = r.step(step);
      expect(s.subscriptionId).toMatch(UUID);
      expect((s.extAfter as Record<string, string>)["weevent-subscriptionId"]).toBe(s.subscriptionId);
      ids[step] = s.subscriptionId as string;
    }
    expect(new Set(Object.values(ids)).size).toBe(3);
    expect(r.step("subscribe-pattern").ext).toEqual({ "weevent-tag": "test" });

    // MESSAGEs: per subscription in ledger order; the pattern takes only the tagged event of T3.
    const sent = r.step("publish-for-subscribers").published as Array<{ topic: string; content: string; eventId: string; status: string }>;
    expect(sent.map((s) => s.status)).toEqual(Array(5).fill("SUCCESS"));
    const idOf = (content: string) => sent.find((s) => s.content === content)?.eventId;
    const got = r.step("messages");
    expect(got.single).toEqual([idOf("m1"), idOf("m3")]);
    expect(got.list).toEqual([idOf("m1"), idOf("m2"), idOf("m3")]);
    expect(got.pattern).toEqual([idOf("p-tagged")]);
    const messages = r.steps("message");
    for (const m of messages) {
      const ev = await getEvent(m.eventId as string);
      expect([m.topic, m.content]).toEqual([ev.topic, ev.content]);
      // The client keeps every weevent- header as an extension: what getEvent answers, weevent-plus included.
      expect(m.extensions).toEqual(ev.extensions);
    }
    const tagged = messages.find((m) => m.subscription === "pattern") as Line;
    expect(tagged.topic).toBe(T3);
    expect(tagged.subscriptionId).toBe(ids["subscribe-pattern"]);
    expect((tagged.extensions as Record<string, string>)["weevent-tag"]).toBe("test");
    expect(messages.filter((m) => m.subscription === "list").map((m) => m.topic)).toEqual([T, T2, T, T]);
    // Header escaping both ways (Spring's codec): a value with ":", a newline and "\" comes back unchanged.
    const escaped = messages.find((m) => m.content === "m2") as Line;
    expect((escaped.extensions as Record<string, string>)["weevent-format"]).toBe("a:b\nc\\d");
    expect((await getEvent(idOf("m2") as string)).extensions["weevent-format"]).toBe("a:b\nc\\d");

    // unSubscribe → true; an id it never got → false without I/O; continue → the same id, from the last event.
    expect(r.step("unsubscribe").result).toBe(true);
    expect(r.step("unsubscribe-unknown").result).toBe(false);
    const cont = r.step("continue");
    expect(cont.subscriptionId).toBe(ids["subscribe-single"]);
    expect(cont.eventId).toBe(idOf("m3"));
    const after = r.step("continued-messages");
    expect(after.sameId).toBe(true);
    const m4 = (after.published as { eventId: string }).eventId;
    expect(after.continued).toEqual([m4]);
    expect(after.list).toEqual([idOf("m1"), idOf("m2"), idOf("m3"), m4]);
    expect(r.step("done").ok).toBe(true);
  });

  it("the gateway is SIGKILLed and restarted under a subscribed client: it reconnects, resubscribes with its id and last eventId, and misses nothing", async () => {
    const publish = async (content: string): Promise<string> => {
      const res = await call(plain, `${NEUTRAL}/rest/publish`, { topic: RESUME, content }, "POST");
      const body = expectJson200(res) as { status: string; eventId: string };
      expect(body.status, res.text).toBe("SUCCESS");
      return body.eventId;
    };
    const total = 30;
    const r = run({ mode: "resume", topic: RESUME, count: String(total), timeoutMs: "120000" });
    await r.until(() => r.steps("subscribed").length > 0);
    const subscribed = r.step("subscribed");
    expect(subscribed.subscriptionId).toMatch(UUID);
    const messages = () => r.steps("message");

    const published: string[] = [];
    for (let i = 0; i < 10; i++) published.push(await publish(`r${i}`));
    await r.until(() => messages().length >= 10);
    await sys.kill("gateway-weevent");
    await r.until(() => r.steps("closed").length > 0);
    // Published while the client's gateway is down: read from the ledger after the resubscribe.
    for (let i = 10; i < 20; i++) published.push(await publish(`r${i}`));
    await sys.restart("gateway-weevent");
    await r.until(() => r.steps("resubscribed").length > 0 || r.steps("resubscribe-failed").length > 0);
    for (let i = 20; i < total; i++) published.push(await publish(`r${i}`));
    const code = await r.exit(100_000);
    expect(code, r.transcript).toBe(0);

    expect(r.steps("fault"), r.transcript).toEqual([]);
    expect(r.steps("resubscribe-failed"), r.transcript).toEqual([]);
    expect(r.steps("closed"), r.transcript).toHaveLength(1);
    expect(r.steps("reconnected"), r.transcript).toHaveLength(1);
    const again = r.step("resubscribed");
    // Same id in weevent-subscriptionId, from the last eventId it received: the broker answers that id.
    expect(again.subscriptionId).toBe(subscribed.subscriptionId);
    expect(again.newId).toBe(subscribed.subscriptionId);
    expect(again.eventId).toBe(published[9]);
    // Every event once, in ledger order, none lost across the restart.
    expect(messages().map((m) => m.eventId)).toEqual(published);
    expect(messages().map((m) => m.content)).toEqual(published.map((_, i) => `r${i}`));
    expect(new Set(messages().map((m) => m.subscriptionId))).toEqual(new Set([subscribed.subscriptionId]));
    expect(r.step("received").ok).toBe(true);
  });
});
