import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "./support/http.ts";
import { TestSystem } from "./support/system.ts";

// Crash survived: none (this suite checks that the real processes start and answer).
describe("the broker started from its real entry points", () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await TestSystem.start({ gateways: 1, indexers: 1, notifiers: 1 });
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("gateway health reports Postgres and Redis reachable", async () => {
    const r = await call(sys.gatewayUrl, "/health");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ status: "ok", service: "gateway", postgres: true, redis: true });
  });

  it("admin/getVersion on the L mount answers the package version in the envelope", async () => {
    const r = await call(sys.gatewayUrl, "/event-broker/admin/getVersion");
    expect(r.status).toBe(200);
    expect(r.contentType).toBe("application/json;charset=UTF-8");
    const body = r.json as { code: number; message: string; data: Record<string, string> };
    expect(body.code).toBe(0);
    expect(body.message).toBe("success");
    expect(Object.keys(body.data)).toEqual(["eventVersion", "gitCommitTimeStamp", "gitBranch", "gitCommitHash"]);
    expect(body.data.eventVersion).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("a publish travels gateway → Kafka → indexer → Postgres and reads back", async () => {
    expect((await call(sys.gatewayUrl, "/event-broker/rest/open", { topic: "smoke" })).json).toEqual({
      code: 0,
      message: "success",
      data: true,
    });
    const pub = await call(sys.gatewayUrl, "/event-broker/rest/publish", { topic: "smoke", content: "hello" }, "POST");
    expect(pub.json).toEqual({ status: "SUCCESS", topic: "smoke", eventId: expect.stringMatching(/^[0-9a-f]{8}-1-\d+$/) });
    const id = (pub.json as { eventId: string }).eventId;
    const ev = await call(sys.gatewayUrl, "/event-broker/rest/getEvent", { eventId: id });
    expect((ev.json as { data: { content: string } }).data.content).toBe("aGVsbG8=");
  });
});
