import { NOT_CHECKED_YET } from "@evb/runtime";
import { describe, expect, it } from "vitest";
import { gatewayReadiness, judgeGateway, lookAtRedis } from "./gateway-readiness.ts";

const fine = { postgres: true as const, redis: true as const, kafka: { ok: true } };

describe("judgeGateway", () => {
  const live = new Map([["1", [{ sealerIndex: 0, canSeal: true }]]]);
  // Issue 21: gateways answered 200 while no publish was acknowledged for 20 s (an indexer
  // heartbeating "can seal" while its Kafka writes hung).
  it("is not ready while its publishes wait 5 s with no receipt for as long, whatever the heartbeats say", () => {
    const r = judgeGateway({ ...fine, liveIndexers: live, publishes: { waiting: 3, oldestMs: 6_000, sinceReceiptMs: 7_000 } });
    expect(r.ok).toBe(false);
    expect(r.reason).toBe("publishes are not being sealed: 3 wait, the oldest for 6 s, none answered for 7 s");
  });
  it("stays ready while publishes wait briefly, or are answered, or none waits", () => {
    for (const publishes of [
      { waiting: 3, oldestMs: 4_000, sinceReceiptMs: 60_000 },
      { waiting: 3, oldestMs: 9_000, sinceReceiptMs: 100 },
      { waiting: 0, oldestMs: 0, sinceReceiptMs: 60_000 },
    ]) {
      expect(judgeGateway({ ...fine, liveIndexers: live, publishes }).ok).toBe(true);
    }
  });

  it("is ready when every store answers and every group has a live indexer", () => {
    expect(judgeGateway({ ...fine, liveIndexers: new Map([["1", [{ sealerIndex: 0, canSeal: true }, { sealerIndex: 1 }]]]) })).toEqual({
      ok: true,
      postgres: true,
      redis: true,
      kafka: true,
      liveIndexers: { "1": 2 },
    });
  });

  it("is not ready while a group has no live indexer, naming the group", () => {
    const r = judgeGateway({
      ...fine,
      liveIndexers: new Map([
        ["1", [{ sealerIndex: 0 }]],
        ["2", []],
      ]),
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/^no live indexer for group 2: /);
  });

  // Issue 19/21: the gateway answered 200 while the group's only indexer refused its log, or could
  // not seal (its own heartbeat, or another's, counted as "a live indexer").
  it("is not ready while no live indexer of a group can seal it, with each one's reason", () => {
    const r = judgeGateway({
      ...fine,
      liveIndexers: new Map([
        [
          "1",
          [
            { sealerIndex: 0, canSeal: false, reason: "group 1: the ledger was replaced" },
            { sealerIndex: 1, canSeal: false },
          ],
        ],
      ]),
    });
    expect(r).toMatchObject({ ok: false, liveIndexers: { "1": 0 } });
    expect(r.reason).toBe(
      "no indexer can seal group 1 (sealer 0: group 1: the ledger was replaced; sealer 1: cannot seal) now: publishes there would time out",
    );
    const one = judgeGateway({
      ...fine,
      liveIndexers: new Map([
        [
          "1",
          [
            { sealerIndex: 0, canSeal: false },
            { sealerIndex: 1, canSeal: true },
          ],
        ],
      ]),
    });
    expect(one).toMatchObject({ ok: true, liveIndexers: { "1": 1 } });
  });

  it("names each unreachable part", () => {
    const r = judgeGateway({
      postgres: new Error("connection refused"),
      redis: new Error("timeout"),
      kafka: { ok: false, reason: "Kafka: no answer to a metadata request within 3000 ms" },
      liveIndexers: new Map([["1", new Error("timeout")]]),
    });
    expect(r.reason).toBe("Postgres: connection refused; Redis: timeout; Kafka: no answer to a metadata request within 3000 ms");
    expect(r).toMatchObject({ postgres: false, redis: false, kafka: false, liveIndexers: { "1": null } });
  });
});

describe("gatewayReadiness", () => {
  const at = 1;
  it("judges what the background checks found last, naming each failed look", () => {
    const r = gatewayReadiness({
      postgres: { ok: true, value: undefined, at },
      redis: { ok: true, value: new Map([["1", [{ sealerIndex: 0 }]]]), at },
      kafka: { ok: true },
      groups: ["1", "2"],
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toBe("no live indexer for group 2: publishes there would time out until one runs");
    const down = gatewayReadiness({
      postgres: { ok: false, reason: "no answer within 1000 ms", at },
      redis: { ok: false, reason: "Command timed out", at },
      kafka: { ok: true },
      groups: ["1"],
    });
    expect(down).toMatchObject({ ok: false, postgres: false, redis: false, liveIndexers: { "1": null } });
    expect(down.reason).toBe("Postgres: no answer within 1000 ms; Redis: Command timed out");
  });

  it("is not ready before the first looks answered, saying it is checking", () => {
    const r = gatewayReadiness({
      postgres: { ok: false, reason: NOT_CHECKED_YET, at: null },
      redis: { ok: false, reason: NOT_CHECKED_YET, at: null },
      kafka: { ok: true },
      groups: ["1"],
    });
    expect(r.reason).toBe("Postgres: checking (no answer yet); Redis: checking (no answer yet)");
  });
});

describe("lookAtRedis", () => {
  it("pings, then keeps each group's indexers with a fresh heartbeat", async () => {
    const look = lookAtRedis(
      { ping: async () => "PONG" },
      {
        chainNodes: async (g) =>
          g === "1"
            ? [
                { sealerIndex: 0, active: true },
                { sealerIndex: 1, active: false },
              ]
            : [],
      },
      ["1", "2"],
    );
    expect(await look()).toEqual(
      new Map([
        ["1", [{ sealerIndex: 0, active: true }]],
        ["2", []],
      ]),
    );
  });

  it("fails when Redis does not answer the PING", async () => {
    const look = lookAtRedis({ ping: () => Promise.reject(new Error("Command timed out")) }, { chainNodes: async () => [] }, ["1"]);
    await expect(look()).rejects.toThrow("Command timed out");
  });
});
