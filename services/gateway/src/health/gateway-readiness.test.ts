import { describe, expect, it } from "vitest";
import { gatewayReadiness, judgeGateway } from "./gateway-readiness.ts";

const fine = { postgres: true as const, redis: true as const, kafka: { ok: true } };

describe("judgeGateway", () => {
  it("is ready when every store answers and every group has a live indexer", () => {
    expect(judgeGateway({ ...fine, liveIndexers: new Map([["1", 2]]) })).toEqual({
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
        ["1", 1],
        ["2", 0],
      ]),
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/^no live indexer for group 2: /);
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
      liveIndexers: async (g) => (g === "1" ? 1 : 0),
    });
    expect(r.ok).toBe(false);
    expect(r.reason).toBe("Redis: down; no live indexer for group 2: publishes there would time out until one runs");
  });
});
