import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Probe, probeReadiness } from "./support/readiness-probes.ts";
import { TestSystem } from "./support/system.ts";
import { TcpRelay } from "./support/tcp-relay.ts";

// Issue 21, item 4 (readiness that tells the truth), measured on the multi-host bed: during a
// Postgres or Redis outage whose packets vanish silently, both gateways left ~48 of ~50 `/readyz`
// probes unanswered for 1 s (each probe asked Postgres and Redis itself and waited up to 5 s), and
// both notifiers answered 200 throughout although nothing was dispatched or delivered. Now the
// stores are looked at in the background and `/readyz` only reads the latest answers: every probe
// is answered within 1 s whatever is down, a notifier says 503 within 5 s of losing Postgres or
// Redis and 200 within 2 s of getting it back. The relays' `stall()` is the silent peer (no FIN,
// no RST); `down()` refuses.

const STALL_MS = 6_000;

describe("readiness while Postgres or Redis stalls", () => {
  let sys: TestSystem;
  let pgRelay: TcpRelay;
  let redisRelay: TcpRelay;
  const probes = { gateway: [] as Probe[], notifier: [] as Probe[], indexer: [] as Probe[] };
  let stopProbing: (() => void) | undefined;

  beforeAll(async () => {
    pgRelay = TcpRelay.for(inject("databaseUrl"), 5432);
    redisRelay = TcpRelay.for(inject("redisUrl"), 6379);
    await Promise.all([pgRelay.start(), redisRelay.start()]);
    const stores = { DATABASE_URL: pgRelay.via(inject("databaseUrl")), REDIS_URL: redisRelay.via(inject("redisUrl")) };
    sys = await TestSystem.start({
      notifiers: 1,
      // The indexer loses Postgres with the others (its heartbeat still reaches Redis directly).
      indexerEnv: { DATABASE_URL: stores.DATABASE_URL },
      notifierEnv: stores,
      gatewayEnv: stores,
      env: { NODE_HEARTBEAT_MS: "500", NODE_STALE_MS: "3000" },
    });
    stopProbing = probeReadiness([
      { url: () => `${sys.gatewayUrl}/readyz`, into: probes.gateway },
      { url: () => `${sys.originOf("notifier-1")}/readyz`, into: probes.notifier },
      { url: () => `${sys.originOf("indexer-1")}/readyz`, into: probes.indexer },
    ]);
    await allReady(Date.now());
  });
  afterAll(async () => {
    stopProbing?.();
    pgRelay?.up();
    redisRelay?.up();
    await sys?.stop();
    pgRelay?.close();
    redisRelay?.close();
  });

  /** Probes sent in [from, to), oldest first. */
  const sent = (list: readonly Probe[], from: number, to = Number.POSITIVE_INFINITY) =>
    list.filter((p) => p.at >= from && p.at < to).sort((a, b) => a.at - b.at);
  /** How long after `from` the first probe answered `status` was sent (ms), or undefined. */
  const firstAfter = (list: readonly Probe[], from: number, status: number) => {
    const hit = sent(list, from).find((p) => p.status === status);
    return hit ? hit.at - from : undefined;
  };
  const waitUntil = async (what: string, done: () => boolean, timeoutMs: number) => {
    for (const end = Date.now() + timeoutMs; !done(); await new Promise((r) => setTimeout(r, 100)))
      if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
  };
  async function allReady(since: number): Promise<void> {
    for (const [name, list] of Object.entries(probes))
      await waitUntil(`${name} ready`, () => firstAfter(list, since, 200) !== undefined, 30_000);
  }
  /** Every probe of the window was answered within its 1 s deadline (status 0: it was not). */
  const expectAllAnswered = (list: readonly Probe[], from: number, to: number) => {
    const window = sent(list, from, to);
    expect(window.length).toBeGreaterThan(10);
    expect(window.filter((p) => p.status === 0)).toEqual([]);
  };

  it("a stalled Postgres: every probe answered within 1 s, 503 within 5 s naming Postgres, 200 within 2 s of its return", async () => {
    const from = Date.now();
    pgRelay.stall();
    await waitUntil("the notifier says Postgres", () => sent(probes.notifier, from).some((p) => /^Postgres: /.test(p.reason)), 10_000);
    await new Promise((r) => setTimeout(r, STALL_MS - (Date.now() - from)));
    const back = Date.now();
    pgRelay.up();
    await allReady(back);

    expect(firstAfter(probes.notifier, from, 503)).toBeLessThanOrEqual(5_000);
    expect(sent(probes.notifier, from, back).find((p) => p.status === 503)?.reason).toMatch(
      /^Postgres: no answer within 1000 ms: nothing is dispatched or delivered meanwhile/,
    );
    expect(firstAfter(probes.gateway, from, 503)).toBeLessThanOrEqual(5_000);
    expect(firstAfter(probes.indexer, from, 503)).toBeLessThanOrEqual(5_000);
    for (const list of Object.values(probes)) expectAllAnswered(list, from, back);
    expect(firstAfter(probes.notifier, back, 200)).toBeLessThanOrEqual(2_000);
    // The gateway also waits for the indexer's next heartbeat to say it can seal again.
    expect(firstAfter(probes.indexer, back, 200)).toBeLessThanOrEqual(5_000);
    expect(firstAfter(probes.gateway, back, 200)).toBeLessThanOrEqual(5_000);
  });

  it("a stalled Redis: every probe answered within 1 s, the notifier 503 within 5 s naming Redis, 200 within 2 s of its return", async () => {
    const from = Date.now();
    redisRelay.stall();
    await new Promise((r) => setTimeout(r, STALL_MS));
    const back = Date.now();
    redisRelay.up();
    await allReady(back);

    expect(firstAfter(probes.notifier, from, 503)).toBeLessThanOrEqual(5_000);
    expect(sent(probes.notifier, from, back).find((p) => p.status === 503)?.reason).toMatch(/^Redis: /);
    // The gateway's receipts travel through Redis: it says so too.
    expect(sent(probes.gateway, from, back).find((p) => p.status === 503)?.reason).toMatch(/^Redis: /);
    for (const list of Object.values(probes)) expectAllAnswered(list, from, back);
    expect(firstAfter(probes.notifier, back, 200)).toBeLessThanOrEqual(2_000);
  });

  // A refused Postgres fails every dispatch run at once: the backoff grows (1, 2, 4, 8 s) and used
  // to keep the notifier 503 for seconds after Postgres was back, until the next retry was due.
  it("a refusing Postgres long enough for the dispatch backoff to grow: 200 within 2 s of its return", async () => {
    const from = Date.now();
    pgRelay.down();
    await new Promise((r) => setTimeout(r, 8_000));
    const back = Date.now();
    pgRelay.up();
    await allReady(back);
    expect(firstAfter(probes.notifier, from, 503)).toBeLessThanOrEqual(5_000);
    for (const list of Object.values(probes)) expectAllAnswered(list, from, back);
    expect(firstAfter(probes.notifier, back, 200)).toBeLessThanOrEqual(2_000);
  });
});
