import { mkdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { type Child, freePort, type ServiceName, startServiceProcess } from "@evb/devstack";
import { expectJson200, expectSuccess, rest, uniqueTopic } from "./support/broker-expect.ts";
import { dropTestData, isolatedEnv } from "./support/isolation.ts";
import { TestSystem } from "./support/system.ts";

// Crashes survived: a gateway whose groups have no live indexer (none started, or the only one
// SIGKILLed), a gateway cut off from Kafka by the network, and a notifier whose dispatch is
// held by a row lock while the ledger grows. Each must say "not ready" on /readyz with the
// reason, stay alive on /livez (a restart would not help), and be ready again once it can work.

const LOG_DIR = join(import.meta.dirname, "..", ".cache", "test-logs");
const KAFKA_CUT = join(import.meta.dirname, "support", "kafka-cut.ts");

interface Answer {
  status: number;
  body: { ok?: boolean; reason?: string } & Record<string, unknown>;
}
async function probe(origin: string, path: "/livez" | "/readyz" | "/health"): Promise<Answer> {
  const res = await fetch(`${origin}${path}`);
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}
/** Waits until /readyz answers `status`, then returns that answer. */
async function readyzBecomes(origin: string, status: number): Promise<Answer> {
  let last: Answer | undefined;
  await expect
    .poll(
      async () => {
        last = await probe(origin, "/readyz");
        return last.status;
      },
      { timeout: 30_000, interval: 200 },
    )
    .toBe(status);
  return last as Answer;
}

describe("gateway readiness", () => {
  const env = isolatedEnv({ GROUP_IDS: "1,2", NODE_HEARTBEAT_MS: "200", NODE_STALE_MS: "1000", NODE_GONE_MS: "5000" });
  const children: Child[] = [];
  mkdirSync(LOG_DIR, { recursive: true });
  const spawn = async (name: string, service: ServiceName, extra: Record<string, string>, path: string) => {
    const port = await freePort();
    const portVar: Record<string, string> = service === "gateway" ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
    const child = await startServiceProcess({
      name,
      service,
      env: { ...env, HOST: "127.0.0.1", ...extra, ...portVar },
      healthUrl: `http://127.0.0.1:${port}${path}`,
      output: { file: join(LOG_DIR, `${env.REDIS_PREFIX}-${name}.log`) },
    });
    children.push(child);
    return { child, origin: `http://127.0.0.1:${port}` };
  };
  let gateway: { child: Child; origin: string };

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop(5000)));
    await dropTestData(env);
  });

  it("is not ready while a group has no live indexer, naming the group, yet alive", async () => {
    // Waits for liveness only: readiness cannot come without an indexer.
    gateway = await spawn("gateway-1", "gateway", { NODE_OPTIONS: `--import ${KAFKA_CUT}` }, "/livez");
    const ready = await probe(gateway.origin, "/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body.reason).toContain("no live indexer for group 1, 2");
    expect(ready.body).toMatchObject({ ok: false, postgres: true, redis: true, kafka: true, liveIndexers: { "1": 0, "2": 0 } });
    expect((await probe(gateway.origin, "/health")).status).toBe(503);
    expect(await probe(gateway.origin, "/livez")).toEqual({ status: 200, body: { status: "alive", ok: true } });
  });

  it("is ready once an indexer runs, and publishes are answered", async () => {
    await spawn("indexer-1", "indexer", { SEALER_INDEX: "0" }, "/readyz");
    const ready = await readyzBecomes(gateway.origin, 200);
    expect(ready.body).toMatchObject({ ok: true, liveIndexers: { "1": 1, "2": 1 } });
    const topic = uniqueTopic("ready");
    expect(expectSuccess(await rest(gateway.origin, "L", "open", { topic }), "L")).toBe(true);
    expect((expectJson200(await rest(gateway.origin, "L", "publish", { topic, content: "x" })) as { status: string }).status).toBe(
      "SUCCESS",
    );
  });

  it("is not ready while Kafka is unreachable, saying so, and ready again when it is back", async () => {
    gateway.child.signal("SIGUSR2");
    const cut = await readyzBecomes(gateway.origin, 503);
    expect(cut.body.reason).toMatch(/^Kafka: /);
    expect(cut.body).toMatchObject({ kafka: false, postgres: true, redis: true });
    expect((await probe(gateway.origin, "/livez")).status).toBe(200);
    gateway.child.signal("SIGUSR2");
    await readyzBecomes(gateway.origin, 200);
  });

  it("is not ready again when its groups' only indexer is killed", async () => {
    const indexer = children[1] as Child;
    indexer.signal("SIGKILL");
    await indexer.exited;
    const gone = await readyzBecomes(gateway.origin, 503);
    expect(gone.body.reason).toContain("no live indexer for group 1, 2");
    expect((await probe(gateway.origin, "/livez")).status).toBe(200);
  });
});

describe("notifier readiness", () => {
  let sys: TestSystem;
  afterAll(async () => {
    await sys?.stop();
  });

  it("is not ready while its dispatch stands still behind the ledger, and ready once it moves", async () => {
    sys = await TestSystem.start({
      notifiers: 1,
      // A held lock must look stuck, not failing: the dispatch query waits instead of timing out.
      notifierEnv: { DISPATCH_STUCK_MS: "1000", DATABASE_QUERY_TIMEOUT_MS: "120000" },
    });
    const notifier = new URL(sys.healthUrlOf("notifier-1")).origin;
    const topic = uniqueTopic("stuck");
    expect(expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic }), "L")).toBe(true);
    const publish = async () =>
      expect((expectJson200(await rest(sys.gatewayUrl, "L", "publish", { topic, content: "x" })) as { status: string }).status).toBe(
        "SUCCESS",
      );
    await publish();
    await readyzBecomes(notifier, 200);

    const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
    await db.connect();
    try {
      // Holds the group's dispatch cursor as a stuck dispatch run would.
      await db.query("BEGIN");
      await expect
        .poll(async () => (await db.query(`SELECT 1 FROM "${sys.env.DATABASE_SCHEMA}".dispatch_cursors WHERE group_id = '1'`)).rowCount)
        .toBe(1);
      await db.query(`SELECT * FROM "${sys.env.DATABASE_SCHEMA}".dispatch_cursors WHERE group_id = '1' FOR UPDATE`);
      await publish();
      const stuck = await readyzBecomes(notifier, 503);
      expect(stuck.body.reason).toMatch(
        /^dispatch of group 1 is stuck: its cursor has stayed at height \d+ for \d+ s while the ledger is at height \d+/,
      );
      expect((await probe(notifier, "/livez")).status).toBe(200);
      await db.query("ROLLBACK");
      await readyzBecomes(notifier, 200);
    } finally {
      await db.end();
    }
  });
});
