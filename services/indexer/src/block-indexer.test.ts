import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ServiceError, silentLogger } from "@evb/domain";
import { BlockIndexer } from "./block-indexer.ts";
import { GIVE_UP_MS, REJOIN_ATTEMPT_MS } from "./consumer-supervisor.ts";
import type { ConsumerSettings, LogMatch } from "./ports.ts";
import { LedgerFenceError } from "@evb/storage";
import { batchOf, FakeConsumer, fakeChain, fakeLedger, fakeMatcher, fakeReceipts, fence } from "../../../test/support/indexer-fakes.ts";

/**
 * `refuse`: groups whose log the matcher refuses. `failConnects`: how many replacement consumers fail
 * to connect. `subscribeErrors`: what the first consumer's subscribe attempts fail with.
 */
function setup(
  o: { groups?: string[]; refuse?: string[]; failConnects?: number; hangRuns?: number; subscribeErrors?: (string | Error)[] } = {},
) {
  const journal: string[] = [];
  const consumers: FakeConsumer[] = [];
  const settings: ConsumerSettings[] = [];
  let failConnects = o.failConnects ?? 0;
  let hangRuns = o.hangRuns ?? 0;
  const ledger = fakeLedger(journal);
  const chain = fakeChain(journal);
  const matcher = fakeMatcher();
  matcher.match.mockImplementation(
    async (g: string): Promise<LogMatch> =>
      o.refuse?.includes(g) ? { ok: false, reason: `group ${g}: refusing log p.log.${g}` } : matcher.result,
  );
  const onFatal = vi.fn();
  const indexer = new BlockIndexer({
    consumers: {
      create: (s) => {
        settings.push(s);
        const c = new FakeConsumer(journal);
        if (consumers.length > 0 && failConnects-- > 0) c.connect.mockRejectedValue(new Error("broker unreachable"));
        // A join that never answers (sent to a broker that went silent), until the member is disconnected.
        else if (consumers.length > 0 && hangRuns-- > 0)
          c.run = vi.fn(() => new Promise<void>((_, reject) => c.disconnect.mockImplementation(async () => reject(new Error("closed")))));
        for (const e of consumers.length === 0 ? (o.subscribeErrors ?? []) : [])
          c.subscribe.mockRejectedValueOnce(typeof e === "string" ? new Error(e) : e);
        consumers.push(c);
        return c;
      },
    },
    ledger,
    matcher,
    logStarts: { logStart: async () => 0 },
    chain,
    receipts: fakeReceipts(journal),
    groups: o.groups ?? ["1"],
    topicPrefix: "p.",
    consumerGroup: "g",
    maxBatchBytes: 1 << 20,
    partitionsPerFetch: 3,
    queryTimeoutMs: 10_000,
    readyMaxLag: 100,
    logger: silentLogger,
    onFatal,
  });
  return { indexer, consumers, settings, journal, ledger, chain, matcher, onFatal };
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe("BlockIndexer", () => {
  it("gives up a silent member's partitions after the brokers' least session, and a seal under way two database calls to rejoin", () => {
    const t = setup();
    expect(t.indexer.sessionTimeoutMs).toBe(6_000);
    expect(t.indexer.rebalanceTimeoutMs).toBeGreaterThan(2 * 10_000);
  });

  it("matches each group's log, then consumes the accepted logs; the batches reach the ledger", async () => {
    const t = setup({ groups: ["1", "2"] });
    await t.indexer.start();
    expect(t.matcher.match.mock.calls).toEqual([
      ["1", "p.log.1"],
      ["2", "p.log.2"],
    ]);
    expect(t.chain.start).toHaveBeenCalledWith(["1", "2"]);
    expect(t.consumers[0]?.subscribe).toHaveBeenCalledWith(["p.log.1", "p.log.2"]);
    expect(t.settings[0]).toMatchObject({ groupId: "g", sessionTimeout: t.indexer.sessionTimeoutMs, partitionsConsumedConcurrently: 3 });
    expect(t.indexer.readiness()).toEqual({ ready: true });
    const done = t.consumers[0]?.onBatch?.(batchOf("p.log.2", 0, [0]));
    await vi.advanceTimersByTimeAsync(0);
    await done;
    expect(t.ledger.seal).toHaveBeenCalledWith("2", 1, [expect.objectContaining({ partition: 0, offset: 0 })], fence);
  });

  it("a refused log starts no consumer and makes the indexer not ready, with the reason", async () => {
    const t = setup({ refuse: ["1"] });
    await t.indexer.start();
    expect(t.consumers).toHaveLength(0);
    expect(t.indexer.readiness()).toEqual({ ready: false, reason: "group 1: refusing log p.log.1" });
    expect(t.indexer.refusedGroups.has("1")).toBe(true);
  });

  it("with one group's log refused, consumes the others and stays not ready, naming the refused one", async () => {
    const t = setup({ groups: ["1", "2"], refuse: ["2"] });
    await t.indexer.start();
    expect(t.consumers[0]?.subscribe).toHaveBeenCalledWith(["p.log.1"]);
    expect(t.chain.start).toHaveBeenCalledWith(["1"]);
    expect(t.indexer.readiness()).toEqual({ ready: false, reason: "group 2: refusing log p.log.2" });
  });

  it("on assignment, seeks to the ledger's positions and commits them", async () => {
    const t = setup();
    await t.indexer.start();
    t.consumers[0]?.assign?.({ "p.log.1": [0, 1], "p.other": [0] });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.ledger.positions).toHaveBeenCalledWith("1", 1);
    // Partition 1 has no ledger position yet: it starts where the group's offset says.
    expect(t.consumers[0]?.seeks).toEqual([{ topic: "p.log.1", partition: 0, offset: 5 }]);
    expect(t.consumers[0]?.commit).toHaveBeenCalledWith([{ topic: "p.log.1", partition: 0, offset: 5 }]);
  });

  it("a crash the Kafka client restarts by itself changes nothing", async () => {
    const t = setup();
    await t.indexer.start();
    t.consumers[0]?.crash?.(new Error("request timed out"), true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.consumers).toHaveLength(1);
    expect(t.indexer.readiness()).toEqual({ ready: true });
  });

  it("a consumer the Kafka client stops for good is replaced in the same process; not ready meanwhile", async () => {
    const t = setup();
    await t.indexer.start();
    t.consumers[0]?.crash?.(new Error("The coordinator is not aware of this member"), false);
    expect(t.indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/re-joining/) });
    await vi.advanceTimersByTimeAsync(999);
    expect(t.consumers).toHaveLength(1);
    expect(t.consumers[0]?.disconnect).toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(t.consumers).toHaveLength(2);
    expect(t.indexer.readiness()).toEqual({ ready: true });
    expect(t.indexer.consumerRestarts).toBe(1);
    // The logs are matched again before the new member consumes.
    expect(t.matcher.match).toHaveBeenCalledTimes(2);
    // A late crash event of the replaced member is ignored.
    t.consumers[0]?.crash?.(new Error("late"), false);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(t.consumers).toHaveLength(2);
    expect(t.onFatal).not.toHaveBeenCalled();
  });

  it("re-joins with backoff while it fails, and heals once an attempt succeeds", async () => {
    const t = setup({ failConnects: 3 });
    await t.indexer.start();
    t.consumers[0]?.crash?.(new Error("fenced"), false);
    // Attempts after 1 s, then 2 s, 4 s and 8 s more: the first three fail.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.consumers).toHaveLength(2);
    expect(t.indexer.readiness()).toMatchObject({
      ready: false,
      reason: expect.stringMatching(/restart failed \(Error: broker unreachable\)/),
    });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(t.consumers).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(3_999);
    expect(t.consumers).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.consumers).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(8_000);
    expect(t.consumers).toHaveLength(5);
    expect(t.indexer.readiness()).toEqual({ ready: true });
    expect(t.indexer.consumerRestarts).toBe(1);
    expect(t.onFatal).not.toHaveBeenCalled();
  });

  it("a re-join waiting out its backoff tries at once when told Kafka answers again", async () => {
    const t = setup({ failConnects: 4 });
    await t.indexer.start();
    t.consumers[0]?.crash?.(new Error("fenced"), false);
    // Attempts after 1, 2, 4 and 8 s fail (15 s); the next would come 16 s later.
    await vi.advanceTimersByTimeAsync(15_000);
    expect(t.consumers).toHaveLength(5);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.consumers).toHaveLength(5);
    t.indexer.retryNow();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.consumers).toHaveLength(6);
    expect(t.indexer.readiness()).toEqual({ ready: true });
    // Told again with nothing waiting: nothing happens.
    t.indexer.retryNow();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(t.consumers).toHaveLength(6);
  });

  it("abandons a re-join that hangs past REJOIN_ATTEMPT_MS and joins again with a fresh member", async () => {
    const t = setup({ hangRuns: 1 });
    await t.indexer.start();
    t.consumers[0]?.crash?.(new Error("no heartbeat answered for 7000 ms"), false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.consumers).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(REJOIN_ATTEMPT_MS - 1);
    expect(t.indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/re-joining/) });
    await vi.advanceTimersByTimeAsync(1);
    expect(t.indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/did not finish within/) });
    // The hung member is closed before the next attempt, which joins.
    expect(t.consumers[1]?.disconnect).toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(t.consumers).toHaveLength(3);
    expect(t.indexer.readiness()).toEqual({ ready: true });
    expect(t.onFatal).not.toHaveBeenCalled();
  });

  it("gives up after GIVE_UP_MS of failed re-joins and asks for a restart, once", async () => {
    const t = setup({ failConnects: 1_000 });
    await t.indexer.start();
    t.consumers[0]?.crash?.(new Error("fenced"), false);
    await vi.advanceTimersByTimeAsync(GIVE_UP_MS - 60_000);
    expect(t.onFatal).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(t.onFatal).toHaveBeenCalledTimes(1);
    expect(t.onFatal.mock.calls[0]?.[0]?.message).toMatch(/could not be restarted: Error: broker unreachable/);
    const attempts = t.consumers.length;
    await vi.advanceTimersByTimeAsync(GIVE_UP_MS);
    expect(t.consumers).toHaveLength(attempts);
  });

  it("retries subscribing while a broker's metadata lags a new topic, and fails at once on other errors", async () => {
    const t = setup({
      // What the Kafka adapter answers while the brokers do not lead every partition yet.
      subscribeErrors: [1, 2].map(() => new ServiceError("LOG_NOT_READY", "the brokers do not lead every partition yet")),
    });
    const started = t.indexer.start();
    await vi.advanceTimersByTimeAsync(400);
    await started;
    expect(t.consumers[0]?.subscribe).toHaveBeenCalledTimes(3);
    expect(t.indexer.readiness()).toEqual({ ready: true });

    const u = setup({ subscribeErrors: ["Not authorized to access topics"] });
    await expect(u.indexer.start()).rejects.toThrow("Not authorized");
    expect(u.consumers[0]?.subscribe).toHaveBeenCalledTimes(1);
  });

  it("close stops the consumer, waits for the seal under way and closes the chain recorder", async () => {
    const t = setup();
    await t.indexer.start();
    await t.indexer.close();
    expect(t.consumers[0]?.disconnect).toHaveBeenCalled();
    expect(t.chain.close).toHaveBeenCalled();
  });

  // Issue 19: after a fenced seal the indexer matches the logs to the ledger again (which rebuilds
  // a ledger that lost blocks from the chain records) and consumes on from the new fence; a match
  // that fails (the ledger's tables still gone) is retried, the indexer not ready meanwhile.
  it("a fenced seal makes it leave the group, match the logs again and consume on from the new fence", async () => {
    const t = setup();
    await t.indexer.start();
    t.ledger.failWith = new LedgerFenceError("1", "group 1: the ledger's tables are gone (relation does not exist)");
    t.matcher.match.mockRejectedValueOnce(new Error('relation "ledger_identity" does not exist'));
    const done = t.consumers[0]?.onBatch?.(batchOf("p.log.1", 0, [0]));
    await vi.advanceTimersByTimeAsync(0);
    await done;
    expect(t.indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/tables are gone/) });
    expect(t.consumers[0]?.disconnect).toHaveBeenCalled();
    t.ledger.failWith = undefined;
    const rebuilt = { ...fence, identity: "ledger-2", height: 7, hash: "0x7" };
    t.matcher.result = {
      ok: true,
      epoch: 1,
      identity: t.matcher.result.ok ? t.matcher.result.identity : { clusterId: "", topicId: "" },
      fence: rebuilt,
    };
    await vi.advanceTimersByTimeAsync(200);
    expect(t.indexer.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/matching the ledger again failed/) });
    await vi.advanceTimersByTimeAsync(400);
    expect(t.indexer.readiness()).toEqual({ ready: true });
    // The failed attempt stopped before making a consumer: one replacement.
    expect(t.consumers).toHaveLength(2);
    const next = t.consumers[1]?.onBatch?.(batchOf("p.log.1", 0, [0]));
    await vi.advanceTimersByTimeAsync(0);
    await next;
    expect(t.ledger.seal).toHaveBeenLastCalledWith("1", 1, [expect.objectContaining({ offset: 0 })], rebuilt);
    expect(t.onFatal).not.toHaveBeenCalled();
  });

  // Issue 19, item 2: chain records refused (the chain topic holds another ledger's blocks) fence
  // the group as a fenced seal does; one refused while starting waits for the start to finish, so
  // that two matches never run at once.
  it("a group fenced by its chain records is refused at once and matched again after the start under way", async () => {
    const t = setup({ groups: ["1", "2"] });
    const reason = "group 1: height 2 is a2 in the chain topic, b2 in this ledger";
    t.chain.start.mockImplementationOnce(async () => t.indexer.fence("1", reason));
    await t.indexer.start();
    expect(t.indexer.canSeal("1")).toMatchObject({ ready: false, reason });
    expect(t.indexer.canSeal("2")).toMatchObject({ ready: true });
    await t.consumers[0]?.onBatch?.(batchOf("p.log.1", 0, [0]));
    expect(t.ledger.seal).not.toHaveBeenCalled();
    expect(t.consumers[0]?.paused).toEqual(["p.log.1"]);
    expect(t.matcher.match).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(t.consumers[0]?.disconnect).toHaveBeenCalled();
    expect(t.matcher.match).toHaveBeenCalledTimes(4);
    expect(t.consumers).toHaveLength(2);
    expect(t.indexer.readiness()).toMatchObject({ ready: true });
  });
});
