import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { END_OF_BLOCK, type SubscriptionStats } from "@evb/storage";
import { type DispatchSource, Dispatcher, UNHEALTHY_AFTER_FAILURES } from "./dispatcher.ts";
import type { DispatchIndex, DispatchResult } from "./ledger-dispatch.ts";

const POLL_MS = 1_000;
const LIMITS = { maxEvents: 10, maxRows: 10 };

const stats = (id: string): SubscriptionStats => ({ id }) as SubscriptionStats;
const result = (touched: string[]): DispatchResult => ({
  from: { height: 0, idx: END_OF_BLOCK },
  to: { height: 1, idx: END_OF_BLOCK },
  events: 1,
  rows: touched.length,
  touched: touched.map(stats),
});

/**
 * A ledger in memory: each group has a queue of run outcomes (a result, or an error to throw);
 * an empty queue means "nothing to dispatch". `gate` holds runs until released.
 */
class FakeSource implements DispatchSource {
  readonly runs: string[] = [];
  readonly outcomes = new Map<string, (DispatchResult | Error)[]>();
  behindGroups = new Set<string>();
  behindCalls = 0;
  gate: Promise<void> | null = null;
  indexes = new Set<DispatchIndex>();

  queue(groupId: string, ...o: (DispatchResult | Error)[]): void {
    this.outcomes.set(groupId, [...(this.outcomes.get(groupId) ?? []), ...o]);
  }
  async behind(groupId: string): Promise<boolean> {
    this.behindCalls++;
    return this.behindGroups.has(groupId);
  }
  async dispatch(groupId: string, index: DispatchIndex): Promise<DispatchResult | null> {
    this.indexes.add(index);
    this.runs.push(groupId);
    if (this.gate) await this.gate;
    const next = this.outcomes.get(groupId)?.shift();
    if (next instanceof Error) throw next;
    return next ?? null;
  }
}

let source: FakeSource;
let matched: string[][];
let now: number;
let dispatcher: Dispatcher;

function make(groups = ["1"], paused?: () => string | null): Dispatcher {
  dispatcher = new Dispatcher({
    store: source,
    groups,
    ...(paused ? { ledgerGuard: { refusal: paused } } : {}),
    limits: LIMITS,
    pollMs: POLL_MS,
    handoff: {
      matched: async (touched) => {
        matched.push(touched.map((t) => t.id));
      },
    },
    logger: silentLogger,
    now: () => now,
  });
  return dispatcher;
}

/** Lets the drain loops' promise chains settle without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
  source = new FakeSource();
  matched = [];
  now = 0;
});

afterEach(async () => {
  await dispatcher?.close();
  vi.useRealTimers();
});

describe("Dispatcher", () => {
  it("on start drains every group until a run finds nothing, handing each run's touched subscriptions on", async () => {
    source.queue("1", result(["a"]), result([]), result(["b", "c"]));
    source.queue("2", result(["z"]));
    make(["1", "2"]).start();
    await settle();
    expect(source.runs.filter((g) => g === "1")).toHaveLength(4);
    expect(source.runs.filter((g) => g === "2")).toHaveLength(2);
    expect(matched).toEqual(expect.arrayContaining([["a"], ["b", "c"], ["z"]]));
    expect(matched).toHaveLength(3);
    expect(dispatcher.failures()).toEqual([]);
  });

  it("runs nothing while paused (the ledger refused), and drains once it is served again", async () => {
    let refusal: string | null = "the ledger in Postgres is not the one this service served";
    source.queue("1", result(["a"]));
    make(["1"], () => refusal).start();
    await settle();
    dispatcher.nudge("1");
    await settle();
    expect(source.runs).toEqual([]);
    refusal = null;
    dispatcher.nudge("1");
    await settle();
    expect(matched).toEqual([["a"]]);
  });

  it("keeps one index per group across runs", async () => {
    source.queue("1", result(["a"]));
    make(["1"]).start();
    await settle();
    dispatcher.nudge("1");
    await settle();
    expect(source.indexes.size).toBe(1);
  });

  it("a nudge during a run gives exactly one more run after it, not a second concurrent one", async () => {
    let release = () => {};
    source.gate = new Promise((r) => {
      release = r;
    });
    make().start();
    await settle();
    expect(source.runs).toEqual(["1"]);
    dispatcher.nudge("1");
    dispatcher.nudge("1");
    await settle();
    expect(source.runs).toEqual(["1"]);
    source.gate = null;
    release();
    await settle();
    expect(source.runs).toEqual(["1", "1"]);
  });

  it("ignores nudges for groups it does not serve", async () => {
    make(["1"]);
    dispatcher.nudge("9");
    await settle();
    expect(source.runs).toEqual([]);
  });

  it("the poll runs a group only when the ledger says it is behind", async () => {
    make().start();
    await settle();
    source.runs.length = 0;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(source.behindCalls).toBe(1);
    expect(source.runs).toEqual([]);
    source.behindGroups.add("1");
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(source.runs).toEqual(["1"]);
  });

  it("a failing run is retried with doubling backoff, reported after repeated failures, and clears on recovery", async () => {
    source.queue("1", new Error("db down"), new Error("db down"), new Error("db down"));
    make().start();
    await settle();
    expect(dispatcher.failures()).toEqual([{ groupId: "1", failures: 1, since: 0, lastError: "db down", retryAt: POLL_MS }]);
    // Within the backoff a nudge does nothing.
    dispatcher.nudge("1");
    await settle();
    expect(source.runs).toHaveLength(1);
    now = POLL_MS;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(dispatcher.failures()[0]).toMatchObject({ failures: 2, retryAt: POLL_MS + 2 * POLL_MS });
    now = 3 * POLL_MS;
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(dispatcher.failures()[0]?.failures).toBe(UNHEALTHY_AFTER_FAILURES);
    expect(dispatcher.failures()[0]?.since).toBe(0);
    now = 7 * POLL_MS;
    await vi.advanceTimersByTimeAsync(4 * POLL_MS);
    expect(dispatcher.failures()).toEqual([]);
    expect(source.runs).toHaveLength(4);
  });

  // Issue 21: a notifier stayed 503 for seconds after Postgres came back, its dispatch waiting out
  // a backoff that had grown during the outage.
  it("retries a failing group at once when told its dependencies answer again, and clears on success", async () => {
    source.queue("1", new Error("db down"), new Error("db down"), new Error("db down"));
    make().start();
    await settle();
    now = POLL_MS;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    now = 3 * POLL_MS;
    await vi.advanceTimersByTimeAsync(2 * POLL_MS);
    expect(dispatcher.failures()[0]).toMatchObject({ failures: 3, retryAt: 7 * POLL_MS });
    now = 3 * POLL_MS + 100;
    dispatcher.retryNow();
    await settle();
    expect(source.runs).toHaveLength(4);
    expect(dispatcher.failures()).toEqual([]);
    // Nothing failing: nothing to retry.
    dispatcher.retryNow();
    await settle();
    expect(source.runs).toHaveLength(4);
  });

  it("a failing 'behind' check counts as a failure of that group", async () => {
    make();
    source.behind = async () => {
      throw new Error("timeout");
    };
    dispatcher.start();
    source.outcomes.clear();
    await settle();
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(dispatcher.failures()[0]).toMatchObject({ groupId: "1", lastError: "timeout" });
  });

  it("a failing hints port (counter copy, delivery jobs) counts as a failed run of the group", async () => {
    source.queue("1", result(["a"]));
    dispatcher = new Dispatcher({
      store: source,
      groups: ["1"],
      limits: LIMITS,
      pollMs: POLL_MS,
      handoff: {
        matched: async () => {
          throw new Error("redis down");
        },
      },
      logger: silentLogger,
      now: () => now,
    });
    dispatcher.start();
    await settle();
    expect(dispatcher.failures()[0]).toMatchObject({ groupId: "1", failures: 1, lastError: "redis down" });
  });

  it("after close no run starts, and close waits for the run in progress", async () => {
    let release = () => {};
    source.gate = new Promise((r) => {
      release = r;
    });
    make().start();
    await settle();
    let closed = false;
    const closing = dispatcher.close().then(() => {
      closed = true;
    });
    await settle();
    expect(closed).toBe(false);
    release();
    await closing;
    dispatcher.nudge("1");
    await vi.advanceTimersByTimeAsync(5 * POLL_MS);
    expect(source.runs).toEqual(["1"]);
  });
});
