import { describe, expect, it } from "vitest";
import { benchPlan, narrowPlan, PARTS } from "./plan.ts";

describe("narrowPlan", () => {
  const full = benchPlan("full");

  it("keeps every part and the whole plan when nothing narrows it", () => {
    const n = narrowPlan(full, {});
    expect(n.partial).toBe(false);
    expect([...n.parts]).toEqual([...PARTS]);
    expect(n.plan).toEqual(full);
  });

  it("drops the scenarios of parts left out, and picks connection counts and rates", () => {
    const n = narrowPlan(full, { only: "closed, open", connections: "1,8", rates: "5000" });
    expect(n.partial).toBe(true);
    expect([...n.parts]).toEqual(["closed", "open"]);
    expect(n.plan.connections).toEqual([1, 8]);
    expect(n.plan.openRates).toEqual([5000]);
    expect(n.plan.callbacks).toEqual([]);
    expect(n.plan.scaled).toEqual({ connections: [1, 8], openRates: [5000] });
    expect(full.connections).toEqual([1, 8, 32, 256, 1024]);
  });

  it("keeps the smallest closed loop for getEvent, whose ids it reads", () => {
    const n = narrowPlan(full, { only: "get" });
    expect(n.plan.connections).toEqual([1]);
    expect(n.plan.openRates).toEqual([]);
    expect(narrowPlan(full, { only: "callbacks" }).plan.connections).toEqual([]);
  });

  it("refuses unknown parts and numbers that are not counts, naming what is allowed", () => {
    expect(() => narrowPlan(full, { only: "closed,latency" })).toThrow(/unknown part "latency"; known parts: kafka, closed/);
    expect(() => narrowPlan(full, { connections: "8,x" })).toThrow(/--connections: "x" is not a positive whole number/);
    expect(() => narrowPlan(full, { rates: "0" })).toThrow(/--rates: "0"/);
    expect(() => narrowPlan(full, { callbacks: "1x0" })).toThrow(/--callbacks: "1x0" is not subscriptions x publishes\/s/);
    expect(() => narrowPlan(full, { callbacks: "100" })).toThrow(/--callbacks: "100"/);
  });

  it("runs the callback scenarios named by --callbacks, each as long as the mode's", () => {
    const n = narrowPlan(benchPlan("quick"), { only: "callbacks", callbacks: "1x1000, 100x50" });
    expect(n.partial).toBe(true);
    expect(n.plan.callbacks).toEqual([
      { subscriptions: 1, rate: 1000, seconds: 2 },
      { subscriptions: 100, rate: 50, seconds: 2 },
    ]);
  });

  it("runs only the STOMP and MQTT scenarios named, with no HTTP load parts beside them", () => {
    const n = narrowPlan(benchPlan("quick"), { only: "protocol-publish,protocol-latency" });
    expect([...n.parts]).toEqual(["protocol-publish", "protocol-latency"]);
    expect(n.plan.connections).toEqual([]);
    expect(n.plan.openRates).toEqual([]);
    expect(n.plan.callbacks).toEqual([]);
    expect(() => narrowPlan(full, { only: "protocols" })).toThrow(/known parts: .*protocol-publish, protocol-stream, protocol-latency/);
  });
});

describe("benchPlan protocols", () => {
  it("keeps the quick STOMP and MQTT scenarios short: under a minute of load and drain", () => {
    const p = benchPlan("quick").protocols;
    // HTTP + 2 publishers, the stream alone and with subscribers, the fixed-rate run; each waits at most drainSeconds once quiet.
    const load = 3 * p.publishSeconds + 2 * p.streamSeconds + p.latencySeconds;
    expect(load).toBeLessThanOrEqual(15);
    expect(p.latencyRate).toBe(1000);
    expect(p.inFlight).toBeGreaterThan(8);
    // Enough SENDs in flight for a stream past the 5,000/s goal (Little's law at ~0.2 s per publish).
    expect(p.streamPublishers * p.streamInFlight).toBeGreaterThanOrEqual(1000);
    expect(benchPlan("full").protocols.latencyRate).toBe(1000);
  });
});
