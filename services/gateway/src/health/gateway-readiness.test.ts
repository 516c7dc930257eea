import { describe, expect, it } from "vitest";
import { gatewayReadiness, judgeGateway } from "./gateway-readiness.ts";

const fine = { postgres: true as const, redis: true as const, kafka: { ok: true } };

describe("judgeGateway", () => {
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
  it("turns failed looks into reasons instead of throwing", async () => {
    const r = await gatewayReadiness({
      pingPostgres: async () => 1,
      pingRedis: () => Promise.reject(new Error("down")),
      kafka: () => ({ ok: true }),
      groups: ["1", "2"],
      liveIndexers: async (g) => (g === "1" ? [{ sealerIndex: 0 }] : []),
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toBe("Redis: down; no live indexer for group 2: publishes there would time out until one runs");
  });
});
