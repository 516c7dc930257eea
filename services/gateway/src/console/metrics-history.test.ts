import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@evb/domain";
import { HISTORY_KEEP_MS, HistorySampler, type HistoryPort, type HistorySample } from "./metrics-history.ts";

/** The deployment's Redis as the samplers see it: one slot claim each, shared counters, samples per group. */
class FakePort implements HistoryPort {
  readonly claims = new Set<number>();
  readonly counters = new Map<string, number>();
  readonly samples = new Map<string, HistorySample[]>();
  down = false;
  private check(): void {
    if (this.down) throw new Error("Redis down");
  }
  async addPublishes(group: string, n: number): Promise<void> {
    this.check();
    this.counters.set(group, (this.counters.get(group) ?? 0) + n);
  }
  async claimSlot(slot: number): Promise<boolean> {
    this.check();
    if (this.claims.has(slot)) return false;
    this.claims.add(slot);
    return true;
  }
  async publishes(group: string): Promise<number> {
    this.check();
    return this.counters.get(group) ?? 0;
  }
  async append(group: string, sample: HistorySample, keepFrom: number): Promise<void> {
    this.check();
    const kept = (this.samples.get(group) ?? []).filter((s) => s.at >= keepFrom);
    this.samples.set(group, [...kept, sample]);
  }
  async read(group: string, since: number): Promise<HistorySample[]> {
    this.check();
    return (this.samples.get(group) ?? []).filter((s) => s.at >= since);
  }
}

const START = 1_700_000_000_000; // a multiple of 10 s
const INTERVAL = 10_000;
const SETTLE = 1_000;

describe("the console history sampler", () => {
  let port: FakePort;
  let ledger: { sealed: number; delivered: number };
  const samplers: HistorySampler[] = [];
  const sampler = (answered: Map<string, number>, figures = async () => ({ ...ledger })) => {
    const s = new HistorySampler({
      port,
      groups: ["1"],
      intervalMs: INTERVAL,
      answered: (g) => answered.get(g) ?? 0,
      figures,
      now: Date.now,
      logger: silentLogger,
    });
    samplers.push(s);
    s.start();
    return s;
  };

  beforeEach(() => {
    vi.useFakeTimers({ now: START + 3_000 });
    port = new FakePort();
    ledger = { sealed: 0, delivered: 0 };
  });

  afterEach(async () => {
    for (const s of samplers.splice(0)) await s.close();
    vi.useRealTimers();
  });

  it("samples at each slot boundary, once per slot however many gateways run, with every gateway's publishes", async () => {
    const a = new Map([["1", 0]]);
    const b = new Map([["1", 0]]);
    sampler(a);
    sampler(b);
    await vi.advanceTimersByTimeAsync(6_999);
    expect(port.samples.get("1")).toBeUndefined();
    a.set("1", 3);
    b.set("1", 4);
    ledger = { sealed: 7, delivered: 2 };
    await vi.advanceTimersByTimeAsync(1);
    // The writer reads a moment after the slot's start (the settle time), when every gateway has added.
    expect(port.samples.get("1")).toBeUndefined();
    await vi.advanceTimersByTimeAsync(SETTLE);
    expect(port.samples.get("1")).toEqual([{ at: START + 10_000 + SETTLE, sealed: 7, delivered: 2, publishes: 7 }]);

    a.set("1", 5);
    ledger = { sealed: 9, delivered: 5 };
    await vi.advanceTimersByTimeAsync(INTERVAL);
    // Only what a gateway answered since its last add is added again.
    expect(port.samples.get("1")?.map((s) => [s.at, s.sealed, s.delivered, s.publishes])).toEqual([
      [START + 10_000 + SETTLE, 7, 2, 7],
      [START + 20_000 + SETTLE, 9, 5, 9],
    ]);
    expect([...port.claims]).toEqual([START + 10_000, START + 20_000]);
  });

  it("skips the slots while Redis is away and samples again when it is back, counting the publishes of the outage", async () => {
    const answered = new Map([["1", 0]]);
    sampler(answered);
    await vi.advanceTimersByTimeAsync(7_000 + SETTLE);
    port.down = true;
    answered.set("1", 5);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL);
    expect(port.samples.get("1")).toHaveLength(1);
    port.down = false;
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(port.samples.get("1")?.map((s) => [s.at, s.publishes])).toEqual([
      [START + 10_000 + SETTLE, 0],
      [START + 40_000 + SETTLE, 5],
    ]);
  });

  it("skips a slot whose ledger figures fail, and keeps the last hour only", async () => {
    let failing = true;
    sampler(new Map(), async () => {
      if (failing) throw new Error("Postgres down");
      return { ...ledger };
    });
    await vi.advanceTimersByTimeAsync(7_000);
    expect(port.samples.get("1")).toBeUndefined();
    failing = false;
    await vi.advanceTimersByTimeAsync(HISTORY_KEEP_MS + INTERVAL + SETTLE);
    const kept = port.samples.get("1") ?? [];
    expect(kept[0]?.at).toBe(Date.now() - HISTORY_KEEP_MS);
    expect(kept.at(-1)?.at).toBe(Date.now());
    expect(kept).toHaveLength(HISTORY_KEEP_MS / INTERVAL + 1);
  });

  it("stops ticking once closed", async () => {
    const s = sampler(new Map());
    await s.close();
    await vi.advanceTimersByTimeAsync(3 * INTERVAL);
    expect(port.claims.size).toBe(0);
  });
});
